/**
 * Where a server's sampled time goes, per request, from a V8 CPU profile (`node --cpu-prof`, which
 * `npm run bench:api -- --profile <dir>` writes for each server).
 *
 * A profile's own "total time" of a function misleads for a server: everything after an `await`
 * is sampled under the microtask queue, not under the function that awaited, so an async
 * function's inclusive time is only its first synchronous stretch. Here each sample goes to the
 * nearest frame of the project's own code on its stack (a function of packages/, apps/ or e2e/,
 * with the library and runtime code it called synchronously), and a sample with no such frame to
 * what it was running: a library (`lib postgres`), a part of Node (`node node:net`), or V8 and
 * native code (`native (garbage collector)`, `native writeBuffer`). Module loading (start-up) and
 * idle samples are left out.
 *
 * The profiler samples wall time on the main thread: a thread preempted inside a system call
 * (a socket write waking PostgreSQL on a busy machine) is counted as busy there. Read native
 * system-call wrappers (writeBuffer, writeUtf8String) as wall time, not CPU; `perf` tells CPU.
 *
 * A compiled server (e2e/bench/compiled.ts) runs one bundle: its frames are mapped back to their
 * source files through the bundle's source map as the profile is read, so that its owners are named
 * as a server's run from the sources are.
 */
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The parts of a `.cpuprofile` read here (Chrome DevTools protocol's Profiler.Profile). */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface Attribution {
  /** Sampled microseconds by owner (see the module's comment), start-up and idle left out. */
  owners: Map<string, number>;
  /** Sampled microseconds of all owners. */
  busy: number;
  /** Sampled microseconds under module loading. */
  startup: number;
}

/** `file:///work/main/packages/domain/src/x.ts` → `packages/domain/src/x.ts`; null for other code. */
export function ownPath(url: string): string | null {
  if (url.includes("/node_modules/")) return null;
  const match = /\/((?:packages|apps|e2e)\/[^?#]+)/.exec(url);
  return match ? match[1]! : null;
}

function categoryOf(frame: CpuProfile["nodes"][number]["callFrame"]): string {
  const { url, functionName } = frame;
  if (url === "") return `native ${functionName || "(anonymous)"}`;
  const library = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (library) return `lib ${library[1]}`;
  if (url.startsWith("node:")) return `node ${url}`;
  return `other ${url}`;
}

const isModuleLoading = (url: string) => url.startsWith("node:internal/modules/");

export function attributeSamples(profile: CpuProfile): Attribution {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  // time per sampled node first: a node's stack is walked once, not once per sample
  const sampled = new Map<number, number>();
  profile.samples.forEach((id, index) => sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  const owners = new Map<string, number>();
  let busy = 0;
  let startup = 0;
  for (const [id, micros] of sampled) {
    const leaf = byId.get(id);
    if (!leaf || leaf.callFrame.functionName === "(idle)") continue;
    let owner: string | null = null;
    let loading = false;
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (isModuleLoading(frame.url)) {
        loading = true;
        break;
      }
      const own: string | null = owner === null ? ownPath(frame.url) : null;
      if (own !== null) owner = `${frame.functionName || "(anonymous)"} ${own}`;
    }
    if (loading) {
      startup += micros;
      continue;
    }
    owner ??= categoryOf(leaf.callFrame);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
    busy += micros;
  }
  return { owners, busy, startup };
}

export function readCpuProfile(file: string): CpuProfile {
  return withSourceFrames(JSON.parse(readFileSync(file, "utf8")) as CpuProfile);
}

/**
 * The profile with each frame of a file that has a source map beside it (`<file>.js.map`, as the
 * production build writes them) moved to the source its function came from: its url, line and
 * column. Frames the map does not cover stay as they are.
 */
export function withSourceFrames(profile: CpuProfile): CpuProfile {
  const maps = new Map<string, { map: SourceMap; url: string } | null>();
  const mapOf = (url: string) => {
    let known = maps.get(url);
    if (known === undefined) {
      const mapFile = url.startsWith("file:") && url.endsWith(".js") ? `${fileURLToPath(url)}.map` : "";
      known =
        mapFile !== "" && existsSync(mapFile)
          ? { map: new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))), url: pathToFileURL(mapFile).href }
          : null;
      maps.set(url, known);
    }
    return known;
  };
  for (const node of profile.nodes) {
    const frame = node.callFrame;
    const bundle = mapOf(frame.url);
    if (bundle === null || frame.lineNumber < 0) continue;
    const entry = bundle.map.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber));
    if (!("originalSource" in entry)) continue;
    node.callFrame = {
      ...frame,
      url: new URL(entry.originalSource, bundle.url).href,
      lineNumber: entry.originalLine,
      columnNumber: entry.originalColumn,
    };
  }
  return profile;
}

/**
 * A Markdown table of µs per request by owner for several profiles side by side, the first one's
 * largest `rows` owners first, then the rest summed. `requests` divides each profile's figures.
 */
export function attributionTable(columns: { name: string; attribution: Attribution; requests: number }[], rows = 30) {
  const first = columns[0];
  if (!first) return "";
  const perRequest = (column: (typeof columns)[number], micros: number) =>
    column.requests > 0 ? (micros / column.requests).toFixed(1) : "–";
  const keys = new Set<string>();
  for (const column of columns) for (const key of column.attribution.owners.keys()) keys.add(key);
  const largest = [...keys]
    .sort((a, b) => {
      const size = (key: string) => Math.max(...columns.map((c) => (c.attribution.owners.get(key) ?? 0) / c.requests));
      return size(b) - size(a);
    })
    .slice(0, rows);
  const lines = [
    `| owner | ${columns.map((c) => `${c.name} µs/req`).join(" | ")} |`,
    `|---|${columns.map(() => "---:").join("|")}|`,
    `| all (start-up and idle left out) | ${columns.map((c) => perRequest(c, c.attribution.busy)).join(" | ")} |`,
  ];
  for (const key of largest) {
    lines.push(`| ${key} | ${columns.map((c) => perRequest(c, c.attribution.owners.get(key) ?? 0)).join(" | ")} |`);
  }
  const rest = (column: (typeof columns)[number]) =>
    column.attribution.busy - largest.reduce((sum, key) => sum + (column.attribution.owners.get(key) ?? 0), 0);
  lines.push(`| the rest | ${columns.map((c) => perRequest(c, rest(c))).join(" | ")} |`);
  return lines.join("\n");
}
