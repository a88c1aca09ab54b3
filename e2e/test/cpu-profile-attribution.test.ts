import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import {
  attributeSamples,
  attributionTable,
  ownPath,
  withSourceFrames,
  type CpuProfile,
} from "../bench/cpu-profile-attribution";

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
const ROOT = "file:///srv/studyflow";

/**
 * A profile of a few call stacks: (root) → processTicksAndRejections → submitResponse (ours) →
 * postgres.js's execute → writeBuffer (native); → requestJson (ours) → hono's json; → hono's
 * dispatch alone; module loading; idle; the garbage collector.
 */
function profile(): CpuProfile {
  const nodes: CpuProfile["nodes"] = [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 8, 10, 11] },
    { id: 2, callFrame: frame("processTicksAndRejections", "node:internal/process/task_queues"), children: [3, 6, 7] },
    {
      id: 3,
      callFrame: frame("submitResponse", `${ROOT}/packages/domain/src/events/submit-response.ts`),
      children: [4],
    },
    { id: 4, callFrame: frame("execute", `${ROOT}/node_modules/postgres/src/connection.js`), children: [5] },
    { id: 5, callFrame: frame("writeBuffer", "") },
    { id: 6, callFrame: frame("requestJson", `${ROOT}/apps/api/src/request-json.ts`), children: [12] },
    { id: 7, callFrame: frame("dispatch", `${ROOT}/node_modules/hono/dist/compose.js`) },
    { id: 8, callFrame: frame("import", "node:internal/modules/esm/loader"), children: [9] },
    // our own module's top level, evaluated while loading: start-up, not a request's
    { id: 9, callFrame: frame("", `${ROOT}/apps/api/src/app.ts`) },
    { id: 10, callFrame: frame("(idle)", "") },
    { id: 11, callFrame: frame("(garbage collector)", "") },
    { id: 12, callFrame: frame("json", `${ROOT}/node_modules/@hono/node-server/dist/index.mjs`) },
  ];
  // node id and microseconds of each sample
  const samples: [number, number][] = [
    [5, 100], // native write under postgres.js under submitResponse: submitResponse's
    [4, 20], // postgres.js itself under submitResponse: submitResponse's
    [3, 30],
    [12, 40], // a library under requestJson: requestJson's
    [7, 50], // hono with no own frame above it
    [9, 1_000], // module loading
    [10, 5_000], // idle
    [11, 60],
    [5, 10],
  ];
  return { nodes, samples: samples.map(([id]) => id), timeDeltas: samples.map(([, micros]) => micros) };
}

describe("CPU profile attribution (api-bench --profile)", () => {
  it("gives each sample to the nearest own function on its stack, else to its library, Node part or native code", () => {
    const { owners, busy, startup } = attributeSamples(profile());
    expect(Object.fromEntries(owners)).toEqual({
      "submitResponse packages/domain/src/events/submit-response.ts": 160,
      "requestJson apps/api/src/request-json.ts": 40,
      "lib hono": 50,
      "native (garbage collector)": 60,
    });
    expect(busy).toBe(310);
    // module loading is start-up, even under a function of our own; idle is left out
    expect(startup).toBe(1_000);
  });

  it("names a library by its package, scoped ones included, and Node's own code by module", () => {
    const stacks: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", ""), children: [2, 3] },
        { id: 2, callFrame: frame("json", `${ROOT}/node_modules/@hono/node-server/dist/index.mjs`) },
        { id: 3, callFrame: frame("Socket._writeGeneric", "node:net") },
      ],
      samples: [2, 3, 3],
      timeDeltas: [7, 5, 6],
    };
    expect(Object.fromEntries(attributeSamples(stacks).owners)).toEqual({
      "lib @hono/node-server": 7,
      "node node:net": 11,
    });
  });

  it("counts packages/, apps/ and e2e/ as own code, never a dependency's files", () => {
    expect(ownPath(`${ROOT}/packages/engine/src/compiler.ts`)).toBe("packages/engine/src/compiler.ts");
    expect(ownPath(`${ROOT}/e2e/bench/api-bench-server.ts`)).toBe("e2e/bench/api-bench-server.ts");
    expect(ownPath(`${ROOT}/node_modules/some-lib/packages/x/index.js`)).toBeNull();
    expect(ownPath("node:internal/process/task_queues")).toBeNull();
  });

  it("prints µs per request side by side, the largest owners first, and the rest summed", () => {
    const studyflow = { name: "studyflow", attribution: attributeSamples(profile()), requests: 10 };
    const bare = {
      name: "bare",
      attribution: { owners: new Map([["lib hono", 40]]), busy: 40, startup: 0 },
      requests: 4,
    };
    const table = attributionTable([studyflow, bare], 2).split("\n");
    expect(table).toEqual([
      "| owner | studyflow µs/req | bare µs/req |",
      "|---|---:|---:|",
      "| all (start-up and idle left out) | 31.0 | 10.0 |",
      "| submitResponse packages/domain/src/events/submit-response.ts | 16.0 | 0.0 |",
      // the largest by either column: hono is 10 µs per request of the bare server's
      "| lib hono | 5.0 | 10.0 |",
      "| the rest | 10.0 | 0.0 |",
    ]);
  });

  it("names a compiled bundle's functions by the sources its source map gives, and leaves other frames alone", async () => {
    // two sources bundled as the production build bundles them (esbuild, a source map beside)
    const dir = await mkdtemp(path.join(tmpdir(), "profile-map-"));
    try {
      await writeFile(
        path.join(dir, "events.ts"),
        "export function submitLike(n: number): number {\n  return n * 2;\n}\n",
      );
      await writeFile(
        path.join(dir, "entry.ts"),
        'import { submitLike } from "./events";\nexport function serveLike(n: number) {\n  return submitLike(n) + 1;\n}\n',
      );
      await build({
        entryPoints: [path.join(dir, "entry.ts")],
        outfile: path.join(dir, "out", "bundle.js"),
        bundle: true,
        format: "esm",
        platform: "node",
        sourcemap: true,
        logLevel: "silent",
      });
      const bundleFile = path.join(dir, "out", "bundle.js");
      const lines = (await readFile(bundleFile, "utf8")).split("\n");
      // where V8 puts a function's frame: the line and column of its `function` keyword (0-based)
      const at = (name: string) => {
        const line = lines.findIndex((text) => text.includes(`function ${name}(`));
        return { lineNumber: line, columnNumber: lines[line]!.indexOf("function") };
      };
      const bundleUrl = pathToFileURL(bundleFile).href;
      const mapped = withSourceFrames({
        nodes: [
          { id: 1, callFrame: frame("(root)", ""), children: [2] },
          { id: 2, callFrame: { functionName: "serveLike", url: bundleUrl, ...at("serveLike") }, children: [3] },
          { id: 3, callFrame: { functionName: "submitLike", url: bundleUrl, ...at("submitLike") }, children: [4] },
          { id: 4, callFrame: frame("execute", `${ROOT}/node_modules/postgres/src/connection.js`) },
        ],
        samples: [3, 4],
        timeDeltas: [5, 7],
      });
      const frames = mapped.nodes.map((node) => node.callFrame);
      expect(frames[1]).toMatchObject({ url: pathToFileURL(path.join(dir, "entry.ts")).href, lineNumber: 1 });
      expect(frames[2]).toMatchObject({ url: pathToFileURL(path.join(dir, "events.ts")).href, lineNumber: 0 });
      expect(frames[3]!.url).toBe(`${ROOT}/node_modules/postgres/src/connection.js`);
      expect(frames[0]!.url).toBe("");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
