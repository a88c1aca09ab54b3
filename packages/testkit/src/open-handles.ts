import { appendFileSync } from "node:fs";
import { Server, Socket } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { openHandlesReport, openHandlesSettleMs } from "./env";

/**
 * A test file must close what it opens. The suite runs a worker's files one after another in one
 * process (`isolate: false`), so a database pool, a server, a Redis connection or a child process
 * left open by one file stays open under the next: PostgreSQL's connection slots run out, ports
 * stay taken, timers fire into another file's tests. This setup file notes what keeps Node's
 * event loop running (connected sockets by where they lead, servers, child processes, and the
 * file's own ref'd timers) when a file starts and again after its own `afterAll` hooks have run,
 * and fails the file when anything is left that was not there before, naming it.
 *
 * Closing is often asynchronous (a pool's `end()` resolves before its sockets are gone), so the
 * count is taken again for a while before a file is failed: 5 s, longer than undici's keep-alive
 * (4 s), after which `fetch` drops an idle connection to a server that is still up.
 * `TEST_OPEN_HANDLES_SETTLE_MS` sets another wait (the check's own test uses a short one).
 * `TEST_OPEN_HANDLES_REPORT=<file>` appends each finding to the file as a JSON line instead of
 * failing, to list every leak of a whole run at once.
 */

/**
 * Resources not counted by kind: file requests, the terminal, pipes and immediates keep no socket,
 * port or process; timers, sockets and servers are checked one by one (below), timers because
 * vitest holds timers of its own now and then, sockets and servers by where they lead and listen.
 */
const NOT_COUNTED = new Set([
  "FSReqCallback",
  "FSReqPromise",
  "FileHandle",
  "TTYWrap",
  "PipeWrap",
  "Immediate",
  "Timeout",
  "TCPSocketWrap",
  "TCPServerWrap",
]);

/** The other live resources (child processes, mostly), counted by kind. */
function liveResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (!NOT_COUNTED.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

function grown(before: Map<string, number>, after: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [kind, count] of after) {
    const was = before.get(kind) ?? 0;
    if (count > was) out.push(`${kind} ${was} → ${count}`);
  }
  return out;
}

/**
 * The process's connected sockets, as `local port → remote address:port`, and its servers. A
 * socket that no longer knows its peer (its connection reset or ended from the other side) is
 * left out: it holds nothing that another file needs, no database connection, no port.
 */
function socketEnds(): Set<string> {
  const ends = new Set<string>();
  // not part of Node's documented API, but kept for diagnostics like this one
  const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
  for (const handle of handles) {
    if (handle instanceof Socket && handle.remotePort !== undefined) {
      ends.add(`socket ${handle.localPort} → ${handle.remoteAddress}:${handle.remotePort}`);
    } else if (handle instanceof Server) {
      const address = handle.address();
      ends.add(`server on ${typeof address === "string" ? address : `${address?.address}:${address?.port}`}`);
    }
  }
  return ends;
}

/**
 * Timers are told apart from vitest's own (it sends test events at most every 100 ms, so a timer
 * of its is pending now and then, and counting would blame it on a file): the global setTimeout
 * and setInterval, which the product's code and its libraries call, are wrapped once per process
 * to note each timer in the running file's set. vitest calls the functions it saved before any
 * test file loaded, which are not wrapped.
 */
interface TimerTracker {
  file: Set<NodeJS.Timeout> | null;
}
const TRACKER = Symbol.for("studyflow.testkit.timers");

function timerTracker(): TimerTracker {
  const holder = globalThis as { [TRACKER]?: TimerTracker };
  if (holder[TRACKER]) return holder[TRACKER];
  const tracker: TimerTracker = { file: null };
  const note = <F extends (...args: never[]) => NodeJS.Timeout>(original: F): F => {
    const wrapped = (...args: Parameters<F>) => {
      const timer = original(...args);
      tracker.file?.add(timer);
      return timer;
    };
    // util.promisify(setTimeout) and the like read these
    for (const key of Reflect.ownKeys(original)) {
      const descriptor = Object.getOwnPropertyDescriptor(original, key);
      if (descriptor && !(key in wrapped)) Object.defineProperty(wrapped, key, descriptor);
    }
    return wrapped as F;
  };
  globalThis.setTimeout = note(globalThis.setTimeout);
  globalThis.setInterval = note(globalThis.setInterval);
  holder[TRACKER] = tracker;
  return tracker;
}

/** The file's timers that would still fire and keep the process alive, by their callbacks' names. */
function liveTimers(timers: Set<NodeJS.Timeout>): string[] {
  const live: string[] = [];
  for (const timer of timers) {
    const { _destroyed: destroyed, _onTimeout: callback } = timer as unknown as {
      _destroyed: boolean;
      _onTimeout: ((...args: unknown[]) => unknown) | null;
    };
    if (!destroyed && timer.hasRef()) live.push(callback?.name || "anonymous");
  }
  return live;
}

const tracker = timerTracker();
const fileTimers = new Set<NodeJS.Timeout>();
tracker.file = fileTimers;
let atStart = new Map<string, number>();
let endsAtStart = new Set<string>();

beforeAll(() => {
  atStart = liveResources();
  endsAtStart = socketEnds();
});

// Registered before the file's own hooks, so (hooks run as a stack) it runs after them.
// vitest reads a hook's first parameter as fixtures, which it requires destructured
// eslint-disable-next-line no-empty-pattern
afterAll(async ({}, suite) => {
  // the waits below are the check's own, not the file's
  tracker.file = null;
  const leftOpen = () => {
    const timers = liveTimers(fileTimers);
    const left = grown(atStart, liveResources());
    left.push(...[...socketEnds()].filter((end) => !endsAtStart.has(end)));
    if (timers.length > 0) left.push(`${timers.length} timer${timers.length === 1 ? "" : "s"} (${timers.join(", ")})`);
    return left;
  };
  const deadline = performance.now() + openHandlesSettleMs;
  let left = leftOpen();
  while (left.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = leftOpen();
  }
  if (left.length === 0) return;
  const file = "filepath" in suite ? suite.filepath : suite.name;
  if (openHandlesReport) {
    appendFileSync(openHandlesReport, `${JSON.stringify({ file, left })}\n`);
    return;
  }
  throw new Error(`${file} left open what it opened: ${left.join(", ")}`);
});
