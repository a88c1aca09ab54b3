import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BENCH_SUMMARY_ENV,
  atLeast,
  benchSummaryTable,
  readBenchFigures,
  recordBenchFigure,
  type BenchFigure,
} from "../src/bench-summary";

const wide: BenchFigure = {
  bench: "export",
  figure: "wide × COPY at 100,000 responses",
  target: "≥ 0.8",
  result: "0.81 (3.3 s against COPY's 2.7 s)",
  met: true,
};
const long: BenchFigure = { ...wide, figure: "long × COPY at 100,000 responses", result: "0.62", met: false };
const json: BenchFigure = { bench: "export", figure: "json × COPY at 100,000 responses", target: "", result: "0.85" };

describe("bench summary", () => {
  let directory: string;
  let file: string;
  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), "sf-bench-summary-test-"));
    file = path.join(directory, "figures.jsonl");
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("records nothing without BENCH_SUMMARY_FILE, and a line per figure with it", () => {
    recordBenchFigure(wide, {});
    expect(readBenchFigures(file)).toEqual([]);

    const env = { [BENCH_SUMMARY_ENV]: file };
    recordBenchFigure(wide, env);
    recordBenchFigure(json, env);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(2);
    // read back as recorded; a figure without a target has no verdict
    expect(readBenchFigures(file)).toEqual([wide, json]);
  });

  it("skips a line cut short or not a figure, keeping the others", () => {
    writeFileSync(file, JSON.stringify(wide) + "\n");
    appendFileSync(file, '{"bench": "export", "figure": "cut sh');
    appendFileSync(file, "\n" + JSON.stringify({ note: "not a figure" }) + "\n\n" + JSON.stringify(long) + "\n");
    expect(readBenchFigures(file)).toEqual([wide, long]);
  });

  it("tables one run: each figure, its target and result, and how many targets were met", () => {
    const table = benchSummaryTable([[wide, long, json]]);
    const lines = table.split("\n");
    expect(lines[0]).toBe("| bench | figure | target | result | met |");
    expect(lines).toContain(
      "| export | wide × COPY at 100,000 responses | ≥ 0.8 | 0.81 (3.3 s against COPY's 2.7 s) | yes |",
    );
    expect(lines).toContain("| export | long × COPY at 100,000 responses | ≥ 0.8 | 0.62 | no |");
    expect(lines).toContain("| export | json × COPY at 100,000 responses |  | 0.85 |  |");
    expect(lines.at(-1)).toBe("1 of 2 figures with a target met.");
  });

  it("tables several runs a column each: met only when every run met it, a figure missing from a run said so", () => {
    const table = benchSummaryTable([
      [wide, long],
      [{ ...wide, result: "0.79", met: false }, { ...long, result: "0.81", met: true }, json],
      [
        { ...wide, result: "0.85" },
        { ...long, result: "0.83", met: true },
      ],
    ]);
    const lines = table.split("\n");
    expect(lines[0]).toBe("| bench | figure | target | run 1 | run 2 | run 3 | met |");
    expect(lines).toContain(
      "| export | wide × COPY at 100,000 responses | ≥ 0.8 | 0.81 (3.3 s against COPY's 2.7 s) | 0.79 | 0.85 | some runs |",
    );
    expect(lines).toContain("| export | long × COPY at 100,000 responses | ≥ 0.8 | 0.62 | 0.81 | 0.83 | some runs |");
    expect(lines).toContain(
      "| export | json × COPY at 100,000 responses |  | (not measured) | 0.85 | (not measured) |  |",
    );
    expect(lines.at(-1)).toBe("0 of 2 figures with a target met in every run.");
  });

  it("words an at-least target from the bound it checks, met at the bound itself", () => {
    expect(atLeast(0.8, 0.8)).toEqual({ target: "≥ 0.8", met: true });
    expect(atLeast(0.79, 0.8)).toEqual({ target: "≥ 0.8", met: false });
    expect(atLeast(1.2, 0.85)).toEqual({ target: "≥ 0.85", met: true });
  });

  it("keeps a cell's pipes and line breaks out of the table's structure", () => {
    const table = benchSummaryTable([[{ ...json, result: "a | b\nc" }]]);
    expect(table.split("\n")).toContain("| export | json × COPY at 100,000 responses |  | a \\| b c |  |");
  });
});
