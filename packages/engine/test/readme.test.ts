// The README's function tables are rendered from the registry; this keeps them in step.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { actionNames, describeRegistry, expressionNames } from "../src/index";

const README = new URL("../README.md", import.meta.url);
const START = "<!-- registry:start -->";
const END = "<!-- registry:end -->";

/** Table rows compared without their padding, which Prettier adds when it formats the README. */
function normalize(markdown: string): string {
  return markdown
    .split("\n")
    .map((line) => (line.startsWith("|") ? line.replace(/ *\| */g, "|").replace(/-{3,}/g, "---") : line))
    .join("\n");
}

function withTables(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  return `${readme.slice(0, start + START.length)}\n\n${describeRegistry()}\n\n${readme.slice(end)}`;
}

describe("README", () => {
  it("documents every expression and action as the registry describes them", () => {
    const readme = readFileSync(README, "utf8");
    const expected = withTables(readme);
    if (process.env["UPDATE_DOCS"] === "1" && normalize(readme) !== normalize(expected))
      writeFileSync(README, expected);
    else
      expect(normalize(readme), "README is out of date: UPDATE_DOCS=1 npx vitest run test/readme.test.ts").toBe(
        normalize(expected),
      );
    for (const name of [...expressionNames, ...actionNames]) expect(expected).toContain(`\`${name}(`);
  });
});
