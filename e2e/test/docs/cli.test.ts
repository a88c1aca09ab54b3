/**
 * The CLI commands the documentation shows are the CLI's: every `npm run cli -- <command>` (and
 * `node dist/cli/main.js <command>`) in README.md and docs/*.md names a registered command with
 * flags it declares, every command of docs/cli.md's table does too, and every registered command
 * is in that table. A command renamed, removed or added without its line fails here by name.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "@studyflow/cli";
import { codeSpans, documents, readDocument } from "./documents";

/** The CLI's own command besides the registered ones. */
const HELP = "help";
/** Every command takes --json. */
const COMMON_FLAGS = ["--json"];

const flagsOf = new Map<string, Set<string>>([
  ...COMMANDS.map(
    (command) =>
      [
        command.name,
        new Set([...command.flags().map((option) => option.long ?? option.flags), ...COMMON_FLAGS]),
      ] as const,
  ),
  [HELP, new Set<string>()],
]);

/** A command line as written: the command's name and the flags that follow it. */
interface Invocation {
  command: string;
  flags: string[];
  where: string;
}

/** `--name` tokens of the rest of a command line, up to where the shell ends the command. */
function flagsIn(rest: string): string[] {
  const command = rest.split(/\s(?:\||&&|;|#)\s|\)\s*$|\)\s*\|/)[0] ?? "";
  return [...command.matchAll(/(?:^|[\s[(|])(--[a-z][a-z0-9-]*)/g)].map((match) => match[1] ?? "");
}

/** Every `npm run [-s] cli -- X …` and `node dist/cli/main.js X …` in a text. */
export function invocations(text: string, file: string): Invocation[] {
  const pattern = /(?:npm run (?:-s )?cli --|node dist\/cli\/main\.js)\s+([a-z][a-z0-9:-]*)([^\n`]*)/g;
  return [...text.matchAll(pattern)].map((match) => ({
    command: match[1] ?? "",
    flags: flagsIn(match[2] ?? ""),
    where: `${file}: ${match[0].trim()}`,
  }));
}

/** The commands of docs/cli.md's table: each code span of a row's first cell is one command line. */
export function tableCommands(text: string): Invocation[] {
  const section = text.slice(text.indexOf("## Commands"), text.indexOf("## Worked examples"));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => {
      const cell = (line.match(/^\|((?:[^|\\]|\\\|)*)\|/)?.[1] ?? "").trim();
      return codeSpans(cell).map((span) => ({
        command: span.split(/\s/)[0] ?? "",
        flags: flagsIn(span.slice(span.split(/\s/)[0]?.length ?? 0)),
        where: `docs/cli.md table: ${span}`,
      }));
    });
}

/** What is wrong with one command line, or nothing. */
function problems(invocation: Invocation): string[] {
  const flags = flagsOf.get(invocation.command);
  if (!flags) return [`${invocation.where}: no command "${invocation.command}"`];
  return invocation.flags
    .filter((flag) => !flags.has(flag))
    .map((flag) => `${invocation.where}: ${invocation.command} has no flag ${flag}`);
}

describe("the CLI commands of the documentation", () => {
  const shown = documents().flatMap((page) => invocations(page.text, page.file));
  const table = tableCommands(readDocument("docs/cli.md"));

  it("finds the command lines of the pages and of the table", () => {
    expect(shown.length).toBeGreaterThan(40);
    expect(table.length).toBeGreaterThan(50);
  });

  it("shows only registered commands, with flags they declare", () => {
    expect(shown.flatMap(problems)).toEqual([]);
  });

  it("lists only registered commands in docs/cli.md's table, with flags they declare", () => {
    expect(table.flatMap(problems)).toEqual([]);
  });

  it("lists every registered command in docs/cli.md's table", () => {
    const listed = new Set(table.map((entry) => entry.command));
    expect([...flagsOf.keys()].filter((name) => !listed.has(name))).toEqual([]);
  });

  it("tells an unknown command or flag from a known one", () => {
    const [good, badFlag, badCommand] = invocations(
      [
        "npm run -s cli -- token:management --subject ops --admin | head -1",
        "npm run cli -- study:create --key k --colour blue",
        "node dist/cli/main.js study:destroy --key k",
      ].join("\n"),
      "x.md",
    );
    expect(good?.flags).toEqual(["--subject", "--admin"]);
    expect(problems(good!)).toEqual([]);
    expect(problems(badFlag!)).toEqual([
      "x.md: npm run cli -- study:create --key k --colour blue: study:create has no flag --colour",
    ]);
    expect(problems(badCommand!)).toEqual([
      'x.md: node dist/cli/main.js study:destroy --key k: no command "study:destroy"',
    ]);
    const rows = tableCommands(
      "## Commands\n| command | what |\n| `timer:show --study K`, `timer:set --study K [--interval SECONDS\\|default]` | x |\n## Worked examples",
    );
    expect(rows.map((row) => [row.command, row.flags])).toEqual([
      ["timer:show", ["--study"]],
      ["timer:set", ["--study", "--interval"]],
    ]);
  });
});
