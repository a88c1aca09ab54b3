/**
 * The production build (`npm run build`): every process entry compiled to one ES module under
 * dist/, with the workspace packages (@studyflow/*, TypeScript sources) inlined and every other
 * package left as an import from node_modules, which the image installs with `npm ci --omit=dev`.
 * The Dockerfile runs the output with plain `node`; e2e/test/compose-check.test.ts checks both.
 *
 * esbuild directly rather than tsup or tsdown: their current releases need Node 22.18+, and the
 * build is small enough to state here in full (no code splitting, the files the code reads beside
 * it copied into dist/). It is also the transformer tsx uses, so the tests and the bundle compile
 * the sources alike.
 *
 * `npm run build -- --outdir <dir>` builds elsewhere (the e2e test does); the directory must lie
 * inside the repository, so that the bundles find node_modules the way they do in the image.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** The compiled file of an entry, relative to the repository root (and to the image's WORKDIR). */
export const entryOutput = (name: EntryName, outDir = OUT_DIR): string => `${outDir}/${name}.js`;

/** Build facts the compose check reads: which packages each bundle imports from node_modules. */
export const METAFILE = "metafile.json";

/** Workspace packages are inlined; anything else imported by name stays external. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === "entry-point" || args.path.startsWith("@studyflow/")) return undefined;
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
function copySiblingFiles(metafile: Metafile, outDir: string): string[] {
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
  return [...copied.keys()].map((target) => path.relative(outDir, target)).sort();
}

/** Builds every entry into `outDir` (emptied first); returns the files it wrote besides the bundles. */
export async function buildAll(outDir = path.join(ROOT, OUT_DIR)): Promise<{ copied: string[] }> {
  const absoluteOutDir = path.resolve(ROOT, outDir);
  if (path.relative(ROOT, absoluteOutDir).startsWith("..")) {
    throw new Error(`the output directory must lie inside ${ROOT} (the bundles import from its node_modules)`);
  }
  rmSync(absoluteOutDir, { recursive: true, force: true });
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
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
  return { copied: copySiblingFiles(metafile, absoluteOutDir) };
}

async function main(argv: string[]): Promise<void> {
  const flag = argv.findIndex((arg) => arg === "--outdir" || arg.startsWith("--outdir="));
  const value = flag === -1 ? undefined : (argv[flag]?.split("=")[1] ?? argv[flag + 1]);
  if (flag !== -1 && !value) throw new Error("--outdir needs a directory");
  const outDir = path.resolve(process.env.INIT_CWD ?? process.cwd(), value ?? path.join(ROOT, OUT_DIR));
  const started = performance.now();
  const { copied } = await buildAll(outDir);
  const took = Math.round(performance.now() - started);
  console.log(
    `built ${Object.keys(ENTRIES).length} entries into ${path.relative(process.cwd(), outDir) || "."} in ${took} ms` +
      ` (copied beside them: ${copied.join(", ") || "nothing"})`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
