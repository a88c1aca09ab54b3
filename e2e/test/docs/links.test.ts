/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an anchor
 * (`page.md#a-heading`, `#a-heading`) names a heading of the Markdown file it points into. Moving
 * or renaming a section shows up here instead of as a dead link.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repository } from "../doc-shell-block";
import { documents, headingAnchors, prose, readDocument } from "./documents";

/** `[text](target)` and `![alt](target)`, with an optional title after the target. */
const LINK = /!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

function relativeLinks(text: string): string[] {
  return [...prose(text).matchAll(LINK)]
    .map((match) => match[1] ?? "")
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `from`, or undefined. */
function problem(from: string, target: string): string | undefined {
  const [file = "", anchor] = target.split("#", 2);
  const resolved = file === "" ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  if (resolved.startsWith("../")) return "points outside the repository";
  if (!existsSync(path.join(repository, resolved))) return `no file ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith(".md")) return `an anchor into ${resolved}, which is not Markdown`;
  if (!headingAnchors(readDocument(resolved)).has(anchor)) return `no heading #${anchor} in ${resolved}`;
  return undefined;
}

describe("links of the documentation", () => {
  const pages = documents();

  it("finds the pages and their links", () => {
    expect(pages.map((page) => page.file)).toEqual(expect.arrayContaining(["README.md", "docs/operations.md"]));
    expect(relativeLinks(readDocument("README.md")).length).toBeGreaterThan(10);
  });

  it.each(pages.map((page) => [page.file, page.text] as const))("%s: every relative link resolves", (file, text) => {
    const broken = relativeLinks(text).flatMap((target) => {
      const why = problem(file, target);
      return why === undefined ? [] : [`${target}: ${why}`];
    });
    expect(broken).toEqual([]);
  });

  it("README links every page in docs/", () => {
    const linked = new Set(
      relativeLinks(readDocument("README.md")).map((target) => path.posix.normalize(target.split("#")[0] ?? "")),
    );
    const unlinked = pages.map((page) => page.file).filter((file) => file !== "README.md" && !linked.has(file));
    expect(unlinked).toEqual([]);
  });

  it("tells a dead link, a missing anchor and a link out of the repository from a good one", () => {
    expect(problem("README.md", "docs/operations.md#health")).toBeUndefined();
    expect(problem("docs/api.md", "#errors")).toBeUndefined();
    expect(problem("docs/api.md", "../packages/engine/README.md#bulk-prefilter")).toBeUndefined();
    expect(problem("README.md", "docs/no-such-page.md")).toBe("no file docs/no-such-page.md");
    expect(problem("README.md", "docs/operations.md#no-such-heading")).toBe(
      "no heading #no-such-heading in docs/operations.md",
    );
    expect(problem("docs/api.md", "../../etc/passwd")).toBe("points outside the repository");
    expect(
      headingAnchors("## A participant event's hot path\n## /docs and /openapi.json\n## Health\n## Health"),
    ).toEqual(new Set(["a-participant-events-hot-path", "docs-and-openapijson", "health", "health-1"]));
  });
});
