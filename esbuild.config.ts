/**
 * The production build (`npm run build`): every process entry compiled to one ES module under
 * dist/, with the workspace packages (@studyflow/*, TypeScript sources) and INLINED_PACKAGES inlined
 * and every other package left as an import from node_modules, which the image installs with
 * `npm ci --omit=dev`.
 * The Dockerfile runs the output with plain `node`; e2e/test/compose-check.test.ts checks both.
 *
 * esbuild directly rather than tsup or tsdown: their current releases need Node 22.18+, and the
 * build is small enough to state here in full (no code splitting, the files the code reads beside
 * it copied into dist/). It is also the transformer tsx uses, so the tests and the bundle compile
 * the sources alike.
 *
 * `npm run build -- --outdir <dir>` builds elsewhere (the e2e test does); the directory must lie
 * inside the repository, so that the bundles find node_modules the way they do in the image.
 *
 * `npm start` builds dist/ too (scripts/ensure-build.ts), with the supervisor of START_ENTRIES
 * besides, whenever checkBuild finds it missing or stale: every build writes MANIFEST, the files it
 * was made from with their sizes, times and hashes. The file runs under plain `node` as well (its
 * types are erasable), which is how ensure-build loads it.
 */
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Metafile, type Plugin } from "esbuild";

const ROOT = path.dirname(fileURLToPath(import.meta.url));

/** Default output directory, relative to the repository root. */
export const OUT_DIR = "dist";

/**
 * Output name (below the output directory, without `.js`) → entry source. Every output sits one
 * directory deep (dist/api/index.js), so the `../migrations` that packages/db/src/migrate.ts
 * resolves from its own file is dist/migrations from every bundle, as it is packages/db/migrations
 * from the sources.
 */
export const ENTRIES = {
  "api/index": "apps/api/src/index.ts",
  "worker/index": "apps/worker/src/index.ts",
  "cli/main": "apps/cli/src/main.ts",
  "db/migrate-cli": "packages/db/src/migrate-cli.ts",
} as const satisfies Record<string, string>;

export type EntryName = keyof typeof ENTRIES;

/**
 * Bundles an entry loads at run time instead of importing them: the API's entry sizes libuv's
 * thread pool before it loads the API (apps/api/src/index.ts), and a static import would be
 * hoisted above that. Built with every build, beside the entry that loads them.
 */
export const LOADED_ENTRIES = {
  "api/main": "apps/api/src/main.ts",
} as const satisfies Record<string, string>;

/**
 * Entries only `npm start` runs: its supervisor (scripts/supervise.ts), which runs the API and the
 * worker bundles beside it. Not in ENTRIES: the image runs each app on its own under tini, and its
 * build stage has no scripts/.
 */
export const START_ENTRIES = {
  "supervise/index": "scripts/supervise.ts",
} as const satisfies Record<string, string>;

/** The compiled file of an entry, relative to the repository root (and to the image's WORKDIR). */
export const entryOutput = (name: EntryName, outDir = OUT_DIR): string => `${outDir}/${name}.js`;

/** Build facts the compose check reads: which packages each bundle imports from node_modules. */
export const METAFILE = "metafile.json";

/**
 * Packages from node_modules the build inlines as it inlines the workspace's: plain JavaScript
 * spread over hundreds of small ES modules, each of which Node would resolve (reading package.json
 * files on the way), load and compile at every start. drizzle-orm took 0.55-0.65 s of each
 * process's start on a 2-core machine, zod and the OpenAPI packages 0.1-0.2 s more (docs/benchmarks.md,
 * "Start-up"). Inlined, esbuild keeps only what the code reaches.
 *
 * No package that stays external may load one of these itself: it would load its own copy from
 * node_modules beside the inlined one, and zod's or drizzle's objects would meet a second copy of
 * their classes. e2e/test/compiled-entries.test.ts imports every external package to check. hono
 * stays external for that reason (@hono/node-server, bull-board and the API reference load it),
 * and jose (openid-client does). yaml stays external as a CommonJS package that requires Node's
 * modules by name, which an ES module bundle cannot.
 */
export const INLINED_PACKAGES: readonly string[] = [
  "drizzle-orm",
  "zod",
  "@hono/zod-openapi",
  "@hono/zod-validator",
  "@asteasolutions/zod-to-openapi",
  "openapi3-ts",
];

/** The package a bare import names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageOfSpecifier(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** Workspace packages and INLINED_PACKAGES are inlined; anything else imported by name stays external. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(context) {
    const inlined = new Set(INLINED_PACKAGES);
    context.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === "entry-point" || args.path.startsWith("@studyflow/")) return undefined;
      if (inlined.has(packageOfSpecifier(args.path))) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** `new URL("./file" | "../dir", import.meta.url)`: a file the code reads beside its own module. */
const SIBLING_URL = /new URL\(\s*(["'])(\.\.?\/[^"']*)\1\s*,\s*import\.meta\.url\s*\)/g;

/**
 * `import.meta.resolve("package")`: a file of an installed package that the code reads (the API
 * reference's viewer). Left as written, it resolves at run time from the bundle to node_modules,
 * as the bundle's imports do: the image installs the production dependencies beside dist/.
 */
const PACKAGE_RESOLVE = /import\.meta\.resolve\(\s*(["'])[^./"'][^"']*\1\s*\)/g;

/** Code without its comments, roughly: enough to count the real uses of import.meta. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/**
 * Bundling moves each module's code into its entry's output file, so a path relative to
 * import.meta.url now starts from dist/<entry>/. This copies each such file or folder to the same
 * relative place from the output, and refuses any other use of import.meta than these and
 * PACKAGE_RESOLVE, which it cannot follow.
 */
function copySiblingFiles(metafile: Metafile, outDir: string): { copied: string[]; sources: string[] } {
  const copied = new Map<string, string>();
  for (const [output, { entryPoint, inputs }] of Object.entries(metafile.outputs)) {
    if (entryPoint === undefined) continue;
    const outputDir = path.dirname(path.resolve(ROOT, output));
    for (const input of Object.keys(inputs)) {
      if (input.includes("node_modules/")) continue;
      const code = withoutComments(readFileSync(path.resolve(ROOT, input), "utf8"));
      const siblings = [...code.matchAll(SIBLING_URL)].map((match) => match[2] ?? "");
      const uses = code.match(/import\.meta\b/g)?.length ?? 0;
      const packageFiles = code.match(PACKAGE_RESOLVE)?.length ?? 0;
      if (uses !== siblings.length + packageFiles) {
        throw new Error(
          `${input}: import.meta is used other than as new URL("./relative", import.meta.url) or import.meta.resolve("package"), which the build cannot carry into ${output}`,
        );
      }
      for (const relative of siblings) {
        const source = path.resolve(ROOT, path.dirname(input), relative);
        const target = path.resolve(outputDir, relative);
        if (!existsSync(source)) throw new Error(`${input}: ${relative} does not exist (${source})`);
        if (path.relative(outDir, target).startsWith("..")) {
          throw new Error(`${input}: ${relative} from ${output} lies outside ${outDir}`);
        }
        const earlier = copied.get(target);
        if (earlier !== undefined && earlier !== source) {
          throw new Error(`${target} would hold both ${earlier} and ${source}`);
        }
        if (earlier === undefined) cpSync(source, target, { recursive: true });
        copied.set(target, source);
      }
    }
  }
  return {
    copied: [...copied.keys()].map((target) => path.relative(outDir, target)).sort(),
    sources: [...new Set(copied.values())].sort(),
  };
}

export interface BuildOptions {
  /** Also build START_ENTRIES (`npm start`'s supervisor). */
  withSupervisor?: boolean;
  /**
   * Further entries (output name → source), built as the product's are: the API bench compiles its
   * servers with them, so that it measures the code as the image runs it.
   */
  extraEntries?: Record<string, string>;
}

/** The entries a build with these options makes. */
export const entriesOf = (options: BuildOptions = {}): Record<string, string> => ({
  ...ENTRIES,
  ...LOADED_ENTRIES,
  ...(options.withSupervisor ? START_ENTRIES : {}),
  ...options.extraEntries,
});

/**
 * Builds every entry into `outDir` (emptied first) and writes its MANIFEST last; returns the entries
 * built and the files it wrote besides the bundles.
 */
export async function buildAll(
  outDir = path.join(ROOT, OUT_DIR),
  options: BuildOptions = {},
): Promise<{ entries: Record<string, string>; copied: string[] }> {
  const absoluteOutDir = path.resolve(ROOT, outDir);
  if (path.relative(ROOT, absoluteOutDir).startsWith("..")) {
    throw new Error(`the output directory must lie inside ${ROOT} (the bundles import from its node_modules)`);
  }
  const entries = entriesOf(options);
  const startedAt = Date.now();
  rmSync(absoluteOutDir, { recursive: true, force: true });
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: entries,
    outdir: absoluteOutDir,
    bundle: true,
    platform: "node",
    format: "esm",
    // Top-level await in the entries needs ES modules; the image runs Node 24, tests may run 20.
    target: "node20",
    // One self-contained file per entry: shared chunks would sit at another depth (see ENTRIES).
    splitting: false,
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    plugins: [externalPackages],
  });
  mkdirSync(absoluteOutDir, { recursive: true });
  // The bundles are ES modules wherever the directory lies (the image has the root package.json too).
  writeFileSync(path.join(absoluteOutDir, "package.json"), `${JSON.stringify({ type: "module" }, null, 2)}\n`);
  writeFileSync(path.join(absoluteOutDir, METAFILE), JSON.stringify(metafile));
  const { copied, sources } = copySiblingFiles(metafile, absoluteOutDir);
  const inputs = Object.keys(metafile.inputs).filter((input) => !input.includes("node_modules/"));
  writeManifest(
    ROOT,
    absoluteOutDir,
    entries,
    [...inputs, ...sources.map((source) => path.relative(ROOT, source))],
    startedAt,
  );
  return { entries, copied };
}

/** Whether process `pid` still runs (one of another user's counts). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Below the repository root: the builds benches make (buildForBench), one directory per process. */
export const BENCH_BUILD_DIR = ".bench-build";

/**
 * The product's entries and `extraEntries` (a bench's own files, output name → source, each one
 * directory deep as ENTRIES are), built as `npm run build` builds them into a directory of this
 * process's own below BENCH_BUILD_DIR, removed when the process exits: benches measure the code as
 * the image and `npm start` run it, not the sources through tsx. Returns each output's absolute path
 * by name.
 */
export async function buildForBench(extraEntries: Record<string, string> = {}): Promise<(name: string) => string> {
  const benchBuilds = path.join(ROOT, BENCH_BUILD_DIR);
  // a bench stopped by a signal leaves its build: removed by the next, once its process is gone
  for (const pid of existsSync(benchBuilds) ? readdirSync(benchBuilds) : []) {
    if (/^\d+$/.test(pid) && !processRuns(Number(pid)))
      rmSync(path.join(benchBuilds, pid), { recursive: true, force: true });
  }
  const outDir = path.join(benchBuilds, String(process.pid));
  process.once("exit", () => rmSync(outDir, { recursive: true, force: true }));
  const { entries } = await buildAll(outDir, { extraEntries });
  return (name) => {
    if (!(name in entries)) throw new Error(`${name} is not an entry of the bench build`);
    return path.join(outDir, `${name}.js`);
  };
}

// ---- what a build was made from, and whether it still matches the sources ---------------------

/** Beside the bundles: the files a build was made from (see writeManifest). */
export const MANIFEST = "build-manifest.json";

/** Read by every build besides the entries' inputs: the build itself and what decides resolution. */
const BUILD_FILES = ["esbuild.config.ts", "package.json", "package-lock.json", "tsconfig.json"];

/** Bumped when the manifest's shape changes: a manifest of another format is a stale build. */
const MANIFEST_FORMAT = 1;

/**
 * A file changed this shortly before the build began may have been read by it in either version:
 * file times come from a coarser clock than Date.now().
 */
const CLOCK_MARGIN_MS = 50;

interface FileStamp {
  size: number;
  mtimeMs: number;
  /** Of the content the build read; empty when it changed during the build (so: unknown). */
  sha256: string;
}

interface BuildManifest {
  format: number;
  /** Output name → entry source, as built. */
  entries: Record<string, string>;
  /** Repository-relative path → its stamp, for every file the build read. */
  files: Record<string, FileStamp>;
  /** Folders copied whole (the migrations): their files, so that an added file is seen. */
  directories: Record<string, string[]>;
}

const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** The files below `dir`, relative to it, sorted. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The workspace manifest (package.json) nearest above a file: its exports decide how imports resolve. */
function packageJsonOf(root: string, file: string): string | undefined {
  for (let dir = path.dirname(path.resolve(root, file)); ; dir = path.dirname(dir)) {
    if (path.relative(root, dir).startsWith("..")) return undefined;
    if (existsSync(path.join(dir, "package.json"))) return path.relative(root, path.join(dir, "package.json"));
  }
}

function writeJsonAtomically(file: string, value: unknown): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value)}\n`);
  renameSync(temporary, file);
}

/**
 * Records what a build read: `inputs` (repository-relative files and copied folders), the nearest
 * package.json of each, and BUILD_FILES that exist under `root`, each with its size, time and
 * content hash. A file changed after `startedAt` (less the clock margin) is recorded without a hash,
 * so the next check rebuilds.
 */
export function writeManifest(
  root: string,
  outDir: string,
  entries: Record<string, string>,
  inputs: string[],
  startedAt: number,
): void {
  const files = new Set<string>();
  const directories: Record<string, string[]> = {};
  for (const input of inputs) {
    const absolute = path.resolve(root, input);
    if (statSync(absolute).isDirectory()) {
      const below = filesBelow(absolute);
      directories[input] = below;
      for (const file of below) files.add(path.join(input, file));
    } else {
      files.add(input);
    }
    const manifest = packageJsonOf(root, input);
    if (manifest !== undefined) files.add(manifest);
  }
  for (const file of BUILD_FILES) if (existsSync(path.join(root, file))) files.add(file);
  const stamps: Record<string, FileStamp> = {};
  for (const file of [...files].sort()) {
    const absolute = path.resolve(root, file);
    const { size, mtimeMs } = statSync(absolute);
    const sha256 = mtimeMs >= startedAt - CLOCK_MARGIN_MS ? "" : sha256Of(absolute);
    stamps[file] = { size, mtimeMs, sha256 };
  }
  const manifest: BuildManifest = { format: MANIFEST_FORMAT, entries, files: stamps, directories };
  writeJsonAtomically(path.join(outDir, MANIFEST), manifest);
}

export type BuildState =
  | { fresh: true; files: number }
  | {
      fresh: false;
      /** Why it must be built, in a few words: "apps/api/src/app.ts changed". */
      reason: string;
    };

/**
 * Whether `outDir` holds a build of `entries` from the files as they are now. Cheap when nothing
 * changed: one stat per recorded file. A file whose time or size differs is hashed; the same
 * content (a checkout, a touch) is not a change, and its new time is written back to the manifest
 * so that the next check stats it only.
 */
export function checkBuild(outDir: string, entries: Record<string, string>, root = ROOT): BuildState {
  const manifestFile = path.join(outDir, MANIFEST);
  let manifest: BuildManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as BuildManifest;
  } catch {
    return { fresh: false, reason: existsSync(outDir) ? `${MANIFEST} is missing or unreadable` : "not built yet" };
  }
  if (manifest.format !== MANIFEST_FORMAT) return { fresh: false, reason: "built by another version of the build" };
  const sorted = (record: Record<string, string>) => JSON.stringify(Object.entries(record).sort());
  if (sorted(manifest.entries) !== sorted(entries)) return { fresh: false, reason: "built for other entries" };
  for (const name of Object.keys(entries)) {
    if (!existsSync(path.join(outDir, `${name}.js`))) return { fresh: false, reason: `${name}.js is missing` };
  }
  for (const [dir, files] of Object.entries(manifest.directories)) {
    const now = existsSync(path.resolve(root, dir)) ? filesBelow(path.resolve(root, dir)) : [];
    if (JSON.stringify(now) !== JSON.stringify(files)) return { fresh: false, reason: `${dir} has other files` };
  }
  let restamped = false;
  for (const [file, stamp] of Object.entries(manifest.files)) {
    const absolute = path.resolve(root, file);
    const stats = statSync(absolute, { throwIfNoEntry: false });
    if (stats === undefined) return { fresh: false, reason: `${file} was removed` };
    if (stats.size === stamp.size && stats.mtimeMs === stamp.mtimeMs) {
      if (stamp.sha256 === "") return { fresh: false, reason: `${file} changed during the previous build` };
      continue;
    }
    if (stamp.sha256 === "" || stats.size !== stamp.size || sha256Of(absolute) !== stamp.sha256) {
      return { fresh: false, reason: `${file} changed` };
    }
    manifest.files[file] = { ...stamp, mtimeMs: stats.mtimeMs };
    restamped = true;
  }
  if (restamped) {
    try {
      writeJsonAtomically(manifestFile, manifest);
    } catch {
      // Read-only output: the next check hashes those files again, with the same answer.
    }
  }
  return { fresh: true, files: Object.keys(manifest.files).length };
}

async function main(argv: string[]): Promise<void> {
  const flag = argv.findIndex((arg) => arg === "--outdir" || arg.startsWith("--outdir="));
  const value = flag === -1 ? undefined : (argv[flag]?.split("=")[1] ?? argv[flag + 1]);
  if (flag !== -1 && !value) throw new Error("--outdir needs a directory");
  const outDir = path.resolve(process.env.INIT_CWD ?? process.cwd(), value ?? path.join(ROOT, OUT_DIR));
  const started = performance.now();
  const { entries, copied } = await buildAll(outDir);
  const took = Math.round(performance.now() - started);
  console.log(
    `built ${Object.keys(entries).length} entries into ${path.relative(process.cwd(), outDir) || "."} in ${took} ms` +
      ` (copied beside them: ${copied.join(", ") || "nothing"})`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
