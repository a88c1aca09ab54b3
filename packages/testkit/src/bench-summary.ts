/**
 * One table of a whole `npm run bench`: each bench records its headline figures (the ones an issue
 * sets a target for, with the floor they are measured against) into the file named by
 * BENCH_SUMMARY_FILE, one JSON line per figure, and the root script (scripts/bench.ts) prints them
 * together when every bench has run. A bench run alone, without the variable, records nothing.
 *
 * A line is appended whole (a short write on a local file), so benches run one after another and
 * several processes of one bench may record into the same file.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

export const BENCH_SUMMARY_ENV = "BENCH_SUMMARY_FILE";

export interface BenchFigure {
  /** The bench that measured it, e.g. "export". */
  bench: string;
  /** What was measured, e.g. "long × COPY at 100,000 responses". */
  figure: string;
  /** The target as the issue words it, e.g. "≥ 0.8"; "" where the figure only informs. */
  target: string;
  /** The figure as printed, with its floor where it has one. */
  result: string;
  /** Whether the target was met; absent for a figure without a target. */
  met?: boolean;
}

/** A target of at least `bound` (a ratio to a floor) and whether `value` met it, for a BenchFigure. */
export function atLeast(value: number, bound: number): Pick<BenchFigure, "target" | "met"> {
  return { target: `≥ ${bound}`, met: value >= bound };
}

/** Appends `figure` to the summary file when BENCH_SUMMARY_FILE names one; else does nothing. */
export function recordBenchFigure(figure: BenchFigure, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[BENCH_SUMMARY_ENV];
  if (!file) return;
  appendFileSync(file, JSON.stringify(figure) + "\n");
}

/** The figures recorded in `file`, in recording order; a line that is not a figure is skipped. */
export function readBenchFigures(file: string): BenchFigure[] {
  if (!existsSync(file)) return [];
  const figures: BenchFigure[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line) as Partial<BenchFigure>;
      if (typeof value.bench === "string" && typeof value.figure === "string" && typeof value.result === "string") {
        figures.push({
          bench: value.bench,
          figure: value.figure,
          target: typeof value.target === "string" ? value.target : "",
          result: value.result,
          ...(typeof value.met === "boolean" ? { met: value.met } : {}),
        });
      }
    } catch {
      // a line cut short by a bench killed mid-write: the others still make the table
    }
  }
  return figures;
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/**
 * The figures of one or more runs as a Markdown table, a row per (bench, figure) in the order
 * first recorded, a result column per run. "met" says yes only when every run met the target.
 */
export function benchSummaryTable(runs: readonly (readonly BenchFigure[])[]): string {
  const rows = new Map<string, { first: BenchFigure; results: (BenchFigure | undefined)[] }>();
  runs.forEach((figures, run) => {
    for (const figure of figures) {
      const key = `${figure.bench}\u0000${figure.figure}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { first: figure, results: Array.from({ length: runs.length }, () => undefined) }));
      row.results[run] = figure;
    }
  });
  const runColumns = runs.length === 1 ? ["result"] : runs.map((_, run) => `run ${run + 1}`);
  const lines = [
    `| bench | figure | target | ${runColumns.join(" | ")} | met |`,
    `|---|---|---|${runColumns.map(() => "---").join("|")}|---|`,
  ];
  let met = 0;
  let targeted = 0;
  for (const { first, results } of rows.values()) {
    const verdicts = results.map((figure) => figure?.met);
    const hasTarget = verdicts.some((verdict) => verdict !== undefined);
    let verdict = "";
    if (hasTarget) {
      targeted++;
      const all = verdicts.every((v) => v === true);
      const none = verdicts.every((v) => v !== true);
      if (all) met++;
      verdict = all ? "yes" : none ? "no" : "some runs";
    }
    lines.push(
      `| ${cell(first.bench)} | ${cell(first.figure)} | ${cell(first.target)} | ${results
        .map((figure) => cell(figure?.result ?? "(not measured)"))
        .join(" | ")} | ${verdict} |`,
    );
  }
  lines.push("", `${met} of ${targeted} figures with a target met${runs.length > 1 ? " in every run" : ""}.`);
  return lines.join("\n");
}
