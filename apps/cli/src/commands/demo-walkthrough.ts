import { readFile } from "node:fs/promises";
import { Option } from "commander";
import { z } from "zod";
import { defineCommand, type CliContext } from "../command-definition";
import type { DemoFile } from "../demo/demo-seed";
import { mailpitMailbox, outboxMailbox, runDemoStory } from "../demo/demo-story";
import { baseUrl, text } from "../flag-values";
import { DEFAULT_DEMO_FILE, seedDemoInto } from "./demo-seed";

/** Participants of a demo study the walkthrough creates itself: enough to watch a bulk run's progress. */
const WALKTHROUGH_PARTICIPANTS = 10_000;

export interface DemoWalkthroughInput {
  /** The API, without a trailing slash. */
  baseUrl: string;
  /**
   * Values written by demo:seed. Absent: the walkthrough seeds the demo itself (idempotent, fresh
   * tokens) into DEFAULT_DEMO_FILE, which needs DATABASE_URL to reach the API's database.
   */
  demoFile?: string;
  /** Mailpit's HTTP API, without a trailing slash; absent: the reset link is read from the outbox. */
  mailpit?: string;
}

/** Runs the demo walkthrough (docs/demo.md) against a running system and checks every answer. */
export async function demoWalkthrough(ctx: CliContext, input: DemoWalkthroughInput) {
  let demo: DemoFile;
  if (input.demoFile === undefined) {
    ctx.output.text(`seeding the demo study (DATABASE_URL) and writing fresh tokens to ${DEFAULT_DEMO_FILE}`);
    demo = await seedDemoInto(ctx, { out: DEFAULT_DEMO_FILE, participants: WALKTHROUGH_PARTICIPANTS });
  } else {
    demo = JSON.parse(await readFile(input.demoFile, "utf8")) as DemoFile;
  }
  const steps: string[] = [];
  await runDemoStory({
    baseUrl: input.baseUrl,
    demo,
    mailbox: input.mailpit === undefined ? outboxMailbox(ctx.database) : mailpitMailbox(input.mailpit),
    report: (line) => {
      steps.push(line);
      // People watch the steps pass one by one; under --json they come with the one result object.
      if (!ctx.output.json) ctx.output.text(`✓ ${line}`);
    },
  });
  const data = { passed: true, steps };
  ctx.output.result(data, ["walkthrough passed"]);
  return data;
}

export const demoWalkthroughCommand = defineCommand({
  name: "demo",
  summary:
    "run the demo walkthrough (docs/demo.md) against a running API, checking every answer; seeds the demo first unless --demo-file is given",
  flags: () => [
    new Option("--base-url <URL>", "the API (default http://localhost:8080)"),
    new Option(
      "--demo-file <FILE>",
      "use the values demo:seed wrote there instead of seeding (e.g. the compose seed's file)",
    ),
    new Option(
      "--mailpit <URL>",
      "read the password-reset e-mail from Mailpit (compose: http://localhost:8025); default: from the outbox in DATABASE_URL",
    ),
  ],
  values: z.object({
    baseUrl: baseUrl.default("http://localhost:8080"),
    demoFile: text.optional(),
    mailpit: baseUrl.optional(),
  }),
  uses: "database",
  run: demoWalkthrough,
});
