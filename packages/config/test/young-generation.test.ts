import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { YOUNG_SEMI_SPACE_MB, withYoungGenerationCap } from "../src/young-generation";

/** The largest young generation node grows to when `nodeOptions` is its NODE_OPTIONS, in MB. */
function grownNewSpaceMb(nodeOptions: string): number {
  const script =
    "const v8 = require('node:v8'); const keep = []; " +
    "for (let i = 0; i < 2e6; i++) keep.push({ i }); " +
    "const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space'); " +
    "process.stdout.write(String(space.space_size / 1048576));";
  const run = spawnSync(process.execPath, ["-e", script], {
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`node failed: ${run.stderr}`);
  return Number(run.stdout);
}

describe("the apps' young generation (NODE_OPTIONS)", () => {
  it("adds the cap to empty or other options, and keeps an operator's own", () => {
    const cap = `--max-semi-space-size=${YOUNG_SEMI_SPACE_MB}`;
    expect(withYoungGenerationCap(undefined)).toBe(cap);
    expect(withYoungGenerationCap("  ")).toBe(cap);
    expect(withYoungGenerationCap("--enable-source-maps")).toBe(`--enable-source-maps ${cap}`);
    expect(withYoungGenerationCap("--max-semi-space-size=64")).toBe("--max-semi-space-size=64");
    expect(withYoungGenerationCap("--enable-source-maps --max-semi-space-size 8")).toBe(
      "--enable-source-maps --max-semi-space-size 8",
    );
    // a different option that only starts the same is not the cap
    expect(withYoungGenerationCap("--max-semi-space-size-x=1")).toBe(`--max-semi-space-size-x=1 ${cap}`);
  });

  it("keeps a process that allocates fast within the cap, where node alone grows past it", () => {
    // the new space is two semi-spaces at most (V8 reports their capacity together)
    expect(grownNewSpaceMb(withYoungGenerationCap(""))).toBeLessThanOrEqual(2 * YOUNG_SEMI_SPACE_MB);
    // the same process grows its young generation past the cap when allowed to: the check above
    // is met by the cap, not by a process that never needed more
    expect(grownNewSpaceMb("--max-semi-space-size=64")).toBeGreaterThan(2 * YOUNG_SEMI_SPACE_MB);
  });
});
