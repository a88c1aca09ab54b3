/**
 * `npm run bench` (scripts/bench.ts): runs the workspaces' benches, as many runs as asked, and ends
 * with one table of the figures they recorded. Run here on the engine's bench, the shortest (a few
 * seconds), which records no figure of its own: what is checked is the runs, the exit status, the
 * table and its saved copy. Recording and tabling figures are tested in packages/testkit.
 */
import { spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

async function runBenchScript(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/bench.ts", ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FORCE_COLOR: "0" },
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, out };
}

describe("npm run bench", () => {
  it("runs the benches as many times as asked and ends with their table, saved beside", async () => {
    const { code, out } = await runBenchScript(["--runs", "2", "--workspace", "@studyflow/engine"]);
    expect(code, out).toBe(0);
    expect(out).toContain("======== run 1 of 2 ========");
    expect(out).toContain("======== run 2 of 2 ========");
    // the engine bench itself ran twice
    expect(out.match(/ratio engine\/baseline/g)).toHaveLength(2);
    const saved = /## Summary of 2 runs \(also in (\S+\.md)\)/.exec(out)?.[1];
    expect(saved, out).toBeDefined();
    try {
      const table = await readFile(saved!, "utf8");
      expect(table).toContain("| bench | figure | target | run 1 | run 2 | met |");
      expect(table.trim().endsWith("0 of 0 figures with a target met in every run.")).toBe(true);
      expect(out).toContain(table.trim());
    } finally {
      await rm(saved!, { force: true });
    }
  }, 120_000);

  it("refuses a run count it cannot take, running nothing", async () => {
    for (const runs of ["0", "11", "two", "1.5"]) {
      const { code, out } = await runBenchScript(["--runs", runs, "--workspace", "@studyflow/engine"]);
      expect(code).toBe(2);
      expect(out).toContain(`--runs takes a whole number from 1 to 10, not "${runs}"`);
      expect(out).not.toContain("ratio engine/baseline");
    }
    const { code, out } = await runBenchScript(["--workspace="]);
    expect(code).toBe(2);
    expect(out).toContain("--workspace takes a workspace's name");
  }, 60_000);

  it("exits non-zero when a bench fails, and still prints the table of what ran", async () => {
    const { code, out } = await runBenchScript(["--workspace", "no-such-workspace"]);
    expect(code).toBe(1);
    expect(out).toContain("## Summary (also in");
    expect(out).toContain("At least one bench failed");
    const saved = /\(also in (\S+\.md)\)/.exec(out)?.[1];
    if (saved) await rm(saved, { force: true });
  }, 60_000);
});
