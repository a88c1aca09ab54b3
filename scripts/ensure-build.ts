/**
 * The first step of `npm start`: makes dist/ a build of the sources as they are now, so that the
 * rest of `npm start` runs compiled JavaScript with plain `node` (the migrations, then the
 * supervisor with the API and the worker), as the image does. It builds when dist/ is missing or
 * stale: when a file any bundle was made from, a copied folder (the migrations), a workspace
 * manifest, the lockfile, tsconfig.json or the build itself differs from what the last build read
 * (esbuild.config.ts, checkBuild). An unchanged tree costs a stat per file, a few milliseconds.
 *
 * Run by plain `node` (Node strips the types of this file and of esbuild.config.ts), so that a
 * start with a current dist/ loads no TypeScript loader; the build itself is esbuild's.
 *
 * Two starts at once build once: the build holds a lock (a file in the temporary directory naming
 * its process), and whoever waited checks again. A process still running from dist/ keeps the code
 * it loaded; a restart of one of its apps during a rebuild fails and is retried by its supervisor.
 *
 * `node scripts/ensure-build.ts [--outdir <dir>] [--quiet]`: dist/ by default. The operator CLI's
 * scripts (`npm run cli`, `demo`, `demo:seed`) run it quietly before `node dist/cli/main.js`.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
// A type only: Node, which runs this file, cannot resolve an import without its extension.
import type * as BuildModule from "../esbuild.config";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** How long a start waits for another's build before giving up. */
const LOCK_TIMEOUT_MS = 5 * 60_000;

/**
 * `--quiet` (the CLI's scripts, whose stdout is the command's answer): nothing when dist/ is up to
 * date, and what a build says goes to stderr.
 */
let quiet = false;

function say(message: string, whenUpToDate = false): void {
  if (!quiet) process.stdout.write(`[build] ${message}\n`);
  else if (!whenUpToDate) process.stderr.write(`[build] ${message}\n`);
}

/**
 * Takes the build lock of `outDir`, waiting while a live process holds it; a lock left by a process
 * that is gone (killed mid-build) is taken over. Returns its release.
 */
async function lock(outDir: string, isAlive: (pid: number) => boolean): Promise<() => void> {
  const key = createHash("sha256").update(outDir).digest("hex").slice(0, 16);
  const file = path.join(tmpdir(), `studyflow-build-${key}.lock`);
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  let told = false;
  for (;;) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder: number;
    try {
      // Empty for a moment while its holder writes it.
      holder = Number(readFileSync(file, "utf8").trim() || "0");
    } catch {
      continue; // released meanwhile
    }
    if (holder > 0 && !isAlive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build (process ${holder}) holds ${file}`);
    if (!told) say(`waiting for the build of process ${holder}`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { outdir: { type: "string" }, quiet: { type: "boolean" } } });
  quiet = values.quiet === true;
  const build = (await import(pathToFileURL(path.join(ROOT, "esbuild.config.ts")).href)) as typeof BuildModule;
  const outDir = path.resolve(values.outdir ?? path.join(ROOT, build.OUT_DIR));
  const shown = path.relative(process.cwd(), outDir) || ".";
  const entries = build.entriesOf({ withSupervisor: true });

  const checkStarted = performance.now();
  let state = build.checkBuild(outDir, entries);
  if (state.fresh) {
    const took = (performance.now() - checkStarted).toFixed(0);
    say(`${shown} is up to date (${state.files} files checked in ${took} ms)`, true);
    return;
  }
  const release = await lock(outDir, build.processRuns);
  try {
    // Whoever held the lock may have built it meanwhile.
    state = build.checkBuild(outDir, entries);
    if (state.fresh) {
      say(`${shown} was built meanwhile`, true);
      return;
    }
    say(`building ${shown}: ${state.reason}`);
    const started = performance.now();
    const { copied } = await build.buildAll(outDir, { withSupervisor: true });
    const took = Math.round(performance.now() - started);
    say(
      `built ${Object.keys(entries).length} entries into ${shown} in ${took} ms (copied beside them: ${copied.join(", ")})`,
    );
  } finally {
    release();
  }
}

await main();
