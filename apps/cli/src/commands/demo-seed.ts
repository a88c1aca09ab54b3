import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Option } from "commander";
import { z } from "zod";
import { defineCommand, type CliContext } from "../command-definition";
import { seedDemo, type DemoFile } from "../demo/demo-seed";
import { text, wholeNumber } from "../flag-values";

/** Where the walkthrough values go unless `--out` says otherwise (compose mounts var/demo). */
export const DEFAULT_DEMO_FILE = "var/demo/demo.json";
const DEFAULT_DEMO_PARTICIPANTS = 10_000;
const MAX_DEMO_PARTICIPANTS = 5_000_000;

export interface DemoSeedInput {
  /**
   * File the walkthrough values are written to. A relative path is taken from the directory npm
   * runs scripts in (the repository root), as the default is, not from where the command was typed.
   */
  out: string;
  participants: number;
}

/** Sets up the demo study and writes the walkthrough values to `out`; returns them. */
export async function seedDemoInto(ctx: CliContext, input: DemoSeedInput): Promise<DemoFile> {
  const demo = await seedDemo(ctx.database, ctx.config, ctx, input.participants);
  await mkdir(path.dirname(input.out), { recursive: true });
  await writeFile(input.out, `${JSON.stringify(demo, null, 2)}\n`, "utf8");
  return demo;
}

/** Sets up the demo study and writes the tokens the walkthrough needs to a file, printing them too. */
export async function demoSeed(ctx: CliContext, input: DemoSeedInput) {
  const demo = await seedDemoInto(ctx, input);
  const data = { out: input.out, demo };
  ctx.output.result(data, [
    `demo study "${demo.studyKey}" is ready; walkthrough values written to ${input.out}:`,
    JSON.stringify(demo, null, 2),
  ]);
  return data;
}

export const demoSeedCommand = defineCommand({
  name: "demo:seed",
  summary: "set up the demo study (idempotent: a rerun keeps the data) and write fresh walkthrough tokens to a file",
  flags: () => [
    new Option("--out <FILE>", `where the walkthrough values are written (default ${DEFAULT_DEMO_FILE})`),
    new Option(
      "--participants <N>",
      `synthetic participants of a new demo study, 0 to ${MAX_DEMO_PARTICIPANTS} (default ${DEFAULT_DEMO_PARTICIPANTS})`,
    ),
  ],
  values: z.object({
    out: text.default(DEFAULT_DEMO_FILE),
    participants: wholeNumber(0, MAX_DEMO_PARTICIPANTS).default(DEFAULT_DEMO_PARTICIPANTS),
  }),
  uses: "database",
  run: demoSeed,
});
