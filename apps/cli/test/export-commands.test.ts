import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LINE_INTERVAL_MS, createProgressReporter, describeSnapshot, progressModeFor } from "../src/progress";

/** A stand-in for stderr that keeps what is written; `isTTY` makes it a terminal for cli-progress. */
function capturedStream(isTTY: boolean) {
  let written = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      written += chunk.toString();
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (isTTY) {
    stream.isTTY = true;
    stream.columns = 120;
  }
  return {
    stream,
    text: () => written,
    // eslint-disable-next-line no-control-regex -- the bar's cursor and line escapes
    plain: () => written.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, ""),
  };
}

describe("progress display", () => {
  it("picks the bar on a terminal, lines elsewhere, nothing under --json", () => {
    expect(progressModeFor({ write: () => true, isTTY: true }, false)).toBe("bar");
    expect(progressModeFor({ write: () => true }, false)).toBe("lines");
    expect(progressModeFor({ write: () => true, isTTY: true }, true)).toBe("none");
  });

  it("says processed of target with a percentage that reaches 100 only when done", () => {
    expect(describeSnapshot({ status: "in_progress", processedCount: 1_999, targetCount: 2_000 }, "responses")).toBe(
      "1,999 of 2,000 responses (99 %) running",
    );
    expect(describeSnapshot({ status: "completed", processedCount: 0, targetCount: 0 }, "reports")).toBe(
      "0 of 0 reports (100 %) completed",
    );
    expect(describeSnapshot({ status: "queued", processedCount: 0, targetCount: 0 }, "reports")).toBe(
      "0 of 0 reports (0 %) queued",
    );
  });

  it("writes a line per status change and at most one per interval while the count moves", () => {
    const out = capturedStream(false);
    let now = 0;
    const reporter = createProgressReporter({
      mode: "lines",
      stream: out.stream,
      label: "export 1234abcd",
      unit: "responses",
      clock: () => now,
    });
    reporter.update({ status: "queued", processedCount: 0, targetCount: 300 });
    reporter.update({ status: "in_progress", processedCount: 0, targetCount: 300 });
    now += 1_000;
    reporter.update({ status: "in_progress", processedCount: 100, targetCount: 300 });
    now += LINE_INTERVAL_MS;
    reporter.update({ status: "in_progress", processedCount: 200, targetCount: 300 });
    now += 10;
    reporter.update({ status: "completed", processedCount: 300, targetCount: 300 });
    reporter.stop();
    expect(out.text().split("\n").filter(Boolean)).toEqual([
      "export 1234abcd: 0 of 300 responses (0 %) queued",
      "export 1234abcd: 0 of 300 responses (0 %) running",
      "export 1234abcd: 200 of 300 responses (66 %) running",
      "export 1234abcd: 300 of 300 responses (100 %) completed",
    ]);
  });

  it("draws a cli-progress bar on a terminal and leaves its final state", () => {
    const out = capturedStream(true);
    const reporter = createProgressReporter({
      mode: "bar",
      stream: out.stream,
      label: "export 1234abcd",
      unit: "participants",
    });
    reporter.update({ status: "in_progress", processedCount: 50, targetCount: 200 });
    reporter.update({ status: "completed", processedCount: 200, targetCount: 200 });
    reporter.stop();
    const shown = out.plain();
    expect(shown).toContain("export 1234abcd [");
    expect(shown).toMatch(/100% \| 200\/200 participants \| completed/);
    expect(out.text()).toContain("\u001b[?25l"); // the cursor is hidden while the bar runs…
    expect(out.text()).toContain("\u001b[?25h"); // …and shown again after
  });

  it("shows nothing under --json", () => {
    const out = capturedStream(true);
    const reporter = createProgressReporter({ mode: "none", stream: out.stream, label: "x", unit: "reports" });
    reporter.update({ status: "completed", processedCount: 1, targetCount: 1 });
    reporter.stop();
    expect(out.text()).toBe("");
  });
});
