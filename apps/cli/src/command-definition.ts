import type { Option } from "commander";
import type { z } from "zod";
import type { DbHandle } from "@studyflow/db";
import type { ClockContext } from "@studyflow/domain/foundation";
import type { CliConfig } from "./config";
import type { Output } from "./output";

/** What a command that needs neither configuration nor database works with. */
export interface OutputContext {
  output: Output;
  /** Where relative file arguments (`--rules`) are resolved: the directory the operator typed the command in. */
  workingDirectory: string;
}

/**
 * What every database command works with; tests build one over their own database. Its clock is
 * the one the command's time comes from: the system's (main.ts), or one a test stops.
 */
export interface CliContext extends OutputContext, ClockContext {
  database: DbHandle;
  config: CliConfig;
}

interface CommandBasics<Input> {
  name: string;
  summary: string;
  /**
   * The command's flags besides `--json`, in the order the usage lists them. Required flags are
   * mandatory options; placeholders in `<…>` are shown as the value in the usage.
   */
  flags: () => Option[];
  /**
   * Checks commander's option values and turns them into the command's input. Runs while the
   * command line is parsed, so a bad value costs no connection and changes nothing.
   */
  values: z.ZodType<Input>;
}

/** One command of the program, as each file under commands/ defines it. */
export type CommandDefinition<Input> = CommandBasics<Input> &
  (
    | { uses: "database"; run: (ctx: CliContext, input: Input) => Promise<unknown> }
    | { uses: "nothing"; run: (ctx: OutputContext, input: Input) => Promise<unknown> }
  );

/** A command bound to its input; `uses` says what the entry has to set up before running it. */
export type BoundCommand =
  | { uses: "database"; run: (ctx: CliContext) => Promise<unknown> }
  | { uses: "nothing"; run: (ctx: OutputContext) => Promise<unknown> };

/** A command with its input type hidden, so the program can hold all of them in one list. */
export interface CliCommand {
  name: string;
  summary: string;
  flags: () => Option[];
  /** @throws z.ZodError when a value is malformed. */
  bind: (values: Record<string, unknown>) => BoundCommand;
}

export function defineCommand<Input>(definition: CommandDefinition<Input>): CliCommand {
  return {
    name: definition.name,
    summary: definition.summary,
    flags: definition.flags,
    bind: (values) => {
      const input = definition.values.parse(values);
      if (definition.uses === "database") {
        const run = definition.run;
        return { uses: "database", run: (ctx) => run(ctx, input) };
      }
      const run = definition.run;
      return { uses: "nothing", run: (ctx) => run(ctx, input) };
    },
  };
}
