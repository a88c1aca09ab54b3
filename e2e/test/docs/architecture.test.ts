/**
 * docs/architecture.md stays the map of the code: its table of the domain's layers is the one
 * `npm run lint` enforces (.dependency-cruiser.cjs), and every file or folder it names exists.
 */
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repository } from "../doc-shell-block";
import { codeSpans, readDocument } from "./documents";

const map = createRequire(import.meta.url)(path.join(repository, ".dependency-cruiser.cjs")) as {
  forbidden: { name: string; comment?: string }[];
};
const page = readDocument("docs/architecture.md");

/** The domain's layers as the page's table lists them: one row a layer, its folders comma-separated. */
function documentedLayers(): string[][] {
  const rows = page.split("\n").filter((line) => /^\|\s*(leaves|\d+)\s*\|/.test(line));
  return rows.map((row) =>
    (row.split("|")[2] ?? "")
      .split(",")
      .map((folder) => folder.trim())
      .filter(Boolean),
  );
}

/** What each domain folder may import, as the lint rules say (`… may import only a, b`). */
function enforcedImports(): Map<string, string[]> {
  const allowed = new Map<string, string[]>();
  for (const rule of map.forbidden) {
    const match = /^packages\/domain\/src\/([\w-]+) may import only (.*)$/.exec(rule.comment ?? "");
    if (rule.name !== "folder-layers" || !match) continue;
    const list = match[2] === "no other folder" ? [] : (match[2] ?? "").split(", ");
    allowed.set(match[1] ?? "", list.sort());
  }
  return allowed;
}

describe("docs/architecture.md", () => {
  it("lists the domain's layers as the import check enforces them, every folder once", () => {
    const layers = documentedLayers();
    const folders = layers.flat();
    const onDisk = readdirSync(path.join(repository, "packages/domain/src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect([...folders].sort()).toEqual([...onDisk].sort());
    const enforced = enforcedImports();
    layers.forEach((layer, index) => {
      const below = layers.slice(0, index).flat().sort();
      for (const folder of layer) expect(enforced.get(folder), folder).toEqual(below);
    });
  });

  it("names only files and folders that exist", () => {
    const paths = codeSpans(page).filter((span) => /^(apps|packages|e2e)\/[\w./-]+$/.test(span));
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((file) => !existsSync(path.join(repository, file)))).toEqual([]);
  });
});
