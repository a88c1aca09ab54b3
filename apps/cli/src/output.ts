/**
 * How the operator CLI speaks: aligned "label  value" lines for people, or exactly one JSON
 * object per run on stdout under `--json`, so scripts can pipe it into `jq` without scraping.
 */

export interface OutputStreams {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface Output {
  readonly json: boolean;
  /** A command's result: `data` as one JSON line under `--json`, the human lines otherwise. */
  result: (data: Record<string, unknown>, human: readonly string[]) => void;
  /**
   * A failure, as one line on stderr. Under `--json` it is `{"error": "..."}`, so a script that
   * parses every line it gets still can; stdout then stays empty.
   */
  error: (message: string) => void;
  /** Free text for people (the usage), on stdout whatever the mode. */
  text: (text: string) => void;
}

export const processStreams: OutputStreams = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Error messages may come from deep inside a driver; stderr gets exactly one line regardless. */
export function oneLine(message: string): string {
  return message
    .split(/\r?\n/)
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .join("; ");
}

export function createOutput(json: boolean, streams: OutputStreams = processStreams): Output {
  return {
    json,
    result: (data, human) => {
      streams.stdout(json ? `${JSON.stringify(data)}\n` : human.map((line) => `${line}\n`).join(""));
    },
    error: (message) => {
      const line = oneLine(message);
      streams.stderr(json ? `${JSON.stringify({ error: line })}\n` : `error: ${line}\n`);
    },
    text: (text) => streams.stdout(text.endsWith("\n") ? text : `${text}\n`),
  };
}

/** An output that keeps what it is given, for tests and for callers that post-process results. */
export function createCapturedOutput(json: boolean) {
  const captured = { stdout: "", stderr: "" };
  const output = createOutput(json, {
    stdout: (text) => {
      captured.stdout += text;
    },
    stderr: (text) => {
      captured.stderr += text;
    },
  });
  return { output, captured };
}

/** Label/value pairs as aligned lines; absent values are left out rather than printed as "undefined". */
export function fieldLines(
  fields: ReadonlyArray<readonly [label: string, value: string | number | boolean | null | undefined]>,
): string[] {
  const shown = fields.filter((field): field is readonly [string, string | number | boolean] => field[1] != null);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${String(value)}`);
}

/** Rows as aligned columns, the first row being the header; the last column is not padded. */
export function tableLines(rows: readonly (readonly string[])[]): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, index) => Math.max(...rows.map((row) => row[index]?.length ?? 0)));
  return rows.map((row) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}
