/**
 * The benches' build (esbuild.config.ts, buildForBench): the product's entries and a bench's own,
 * compiled as `npm run build` compiles them into a directory of the bench process's own, which goes
 * when that process exits, and which a later bench removes when a signal stopped the earlier one.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BENCH_BUILD_DIR } from "../../esbuild.config";
import { REPO_ROOT } from "./deployment-files";

const benchBuilds = path.join(REPO_ROOT, BENCH_BUILD_DIR);
/** A bench's own entry: one module that reads a workspace package, as the API bench's server does. */
const SOURCE = `e2e/.bench-build-probe-${process.pid}.ts`;

/** Runs `script` (ES module code) under tsx from the repository root; its stdout and exit code. */
function runScript(script: string) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return { stdout: run.stdout.trim(), stderr: run.stderr, status: run.status };
}

afterAll(async () => {
  await rm(path.join(REPO_ROOT, SOURCE), { force: true });
});

describe("buildForBench", () => {
  it("compiles the product's entries and a bench's own, runnable with plain node, and removes them at exit", async () => {
    await writeFile(
      path.join(REPO_ROOT, SOURCE),
      'import { defaultThreadPoolSize } from "@studyflow/config";\nconsole.log(`pool ${defaultThreadPoolSize(64)}`);\n',
    );
    // a build left by a bench that a signal stopped: its process is gone
    const stale = path.join(benchBuilds, "999999999");
    await mkdir(stale, { recursive: true });
    await writeFile(path.join(stale, "left.js"), "");

    const built = runScript(`
      import { existsSync } from "node:fs";
      import { execFileSync } from "node:child_process";
      import { buildForBench } from "./esbuild.config.ts";
      const output = await buildForBench({ "bench/probe": ${JSON.stringify(SOURCE)} });
      const probe = output("bench/probe");
      const worker = output("worker/index");
      let unknown = "";
      try { output("bench/other"); } catch (error) { unknown = error.message; }
      console.log(JSON.stringify({
        probe, worker, ran: execFileSync(process.execPath, [probe], { encoding: "utf8" }).trim(),
        workerBuilt: existsSync(worker), unknown,
      }));
    `);
    expect(built.stderr).toBe("");
    expect(built.status).toBe(0);
    const result = JSON.parse(built.stdout) as Record<string, string | boolean>;
    // the bench's own entry, compiled with the workspace package inlined, runs under plain node
    expect(result.ran).toBe("pool 16");
    expect(result.workerBuilt).toBe(true);
    // one directory of the bench process's own holds both
    const outDir = path.dirname(path.dirname(String(result.probe)));
    expect(path.dirname(outDir)).toBe(benchBuilds);
    expect(result.worker).toBe(path.join(outDir, "worker", "index.js"));
    expect(result.unknown).toMatch(/bench\/other is not an entry/);
    // gone with its process, and so is the stale build
    expect(existsSync(outDir)).toBe(false);
    expect(existsSync(stale)).toBe(false);
    const left = existsSync(benchBuilds) ? await readdir(benchBuilds) : [];
    expect(left).not.toContain("999999999");
  });
});
