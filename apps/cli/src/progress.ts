import { SingleBar } from "cli-progress";
import { taskStatusWord } from "@studyflow/domain/tasks";

/**
 * How a long command shows a task's progress while it follows it: a redrawn bar on a terminal,
 * a plain line now and then when stderr is a file or a pipe (a CI log, `2> log`), nothing under
 * `--json`, whose one object on stdout is the whole answer. Progress always goes to stderr, so
 * stdout holds only the result and can be piped.
 */

/** Where progress is written: process.stderr, or a test's stand-in. */
export interface ProgressStream {
  write: (text: string) => unknown;
  /** True on a terminal: only then is the bar redrawn in place. */
  isTTY?: boolean;
  columns?: number;
}

/** What the display needs of a Task row. */
export interface ProgressSnapshot {
  status: string;
  processedCount: number;
  targetCount: number;
}

export type ProgressMode = "bar" | "lines" | "none";

export interface ProgressReporter {
  readonly mode: ProgressMode;
  update: (snapshot: ProgressSnapshot) => void;
  /** Ends the display; a bar leaves its last state on screen and moves to a new line. */
  stop: () => void;
}

/**
 * A plain line at most this often while the count moves: a log of a long export stays short
 * enough to read (one line per 5 s is 720 lines for an hour) yet shows it is alive.
 */
export const LINE_INTERVAL_MS = 5_000;

/** `--json` shows no progress; a terminal gets the bar, anything else plain lines. */
export function progressModeFor(stream: ProgressStream, json: boolean): ProgressMode {
  if (json) return "none";
  return stream.isTTY === true ? "bar" : "lines";
}

const numbers = new Intl.NumberFormat("en");

/** `part` of `whole` in whole percent, never 100 before it is all (as the console says it). */
function percent(part: number, whole: number): number {
  if (whole <= 0) return 0;
  const value = Math.floor((part / whole) * 100);
  return part < whole ? Math.min(value, 99) : 100;
}

/** "1,200 of 10,000 (12 %) running" */
export function describeSnapshot(snapshot: ProgressSnapshot, unit: string): string {
  const done = snapshot.status === "completed";
  const processed = done ? Math.max(snapshot.processedCount, snapshot.targetCount) : snapshot.processedCount;
  const share = snapshot.targetCount === 0 ? (done ? 100 : 0) : percent(processed, snapshot.targetCount);
  return `${numbers.format(processed)} of ${numbers.format(snapshot.targetCount)} ${unit} (${share} %) ${taskStatusWord(snapshot.status)}`;
}

export interface ProgressOptions {
  mode: ProgressMode;
  stream: ProgressStream;
  /** Printed in front of every line and the bar, e.g. "export 3f2a…". */
  label: string;
  /** What is counted ("participants", "responses"). */
  unit: string;
  /** Milliseconds now: the command's clock; tests move it by hand. */
  clock: () => number;
}

export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  switch (options.mode) {
    case "none":
      return { mode: "none", update: () => undefined, stop: () => undefined };
    case "lines":
      return lineReporter(options);
    case "bar":
      return barReporter(options);
  }
}

function lineReporter({ stream, label, unit, clock }: ProgressOptions): ProgressReporter {
  let lastStatus: string | undefined;
  let lastProcessed = -1;
  let lastAt = Number.NEGATIVE_INFINITY;
  return {
    mode: "lines",
    update: (snapshot) => {
      const now = clock();
      const statusChanged = snapshot.status !== lastStatus;
      const moved = snapshot.processedCount !== lastProcessed;
      // A status change is always worth a line; a count only every LINE_INTERVAL_MS.
      if (!statusChanged && !(moved && now - lastAt >= LINE_INTERVAL_MS)) return;
      lastStatus = snapshot.status;
      lastProcessed = snapshot.processedCount;
      lastAt = now;
      stream.write(`${label}: ${describeSnapshot(snapshot, unit)}\n`);
    },
    stop: () => undefined,
  };
}

function barReporter({ stream, label, unit }: ProgressOptions): ProgressReporter {
  const bar = new SingleBar({
    // cli-progress writes through readline's cursor helpers, which need only write().
    stream: stream as NodeJS.WritableStream,
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {state} | eta {eta_formatted}`,
    barCompleteChar: "█",
    barIncompleteChar: "░",
    hideCursor: true,
    // The command handles Ctrl-C itself (see commands/export-task.ts) and stops the bar on the way out.
    gracefulExit: false,
    etaBuffer: 20,
  });
  let started = false;
  return {
    mode: "bar",
    update: (snapshot) => {
      // A bar with a total of 0 would divide by it; an empty export is one step, done or not.
      const total = Math.max(snapshot.targetCount, 1);
      const value =
        snapshot.status === "completed" ? total : Math.min(snapshot.processedCount, snapshot.targetCount, total);
      const payload = { state: taskStatusWord(snapshot.status) };
      if (!started) {
        bar.start(total, value, payload);
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(value, payload);
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}
