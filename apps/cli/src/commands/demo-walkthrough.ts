import { readFile } from "node:fs/promises";
import { Option } from "commander";
import { z } from "zod";
import { defineCommand, type OutputContext } from "../command-definition";
import type { DemoFile } from "../demo/demo-seed";
import { mailpitMailbox, runDemoStory } from "../demo/demo-story";
import { baseUrl, text } from "../flag-values";
import { DEFAULT_DEMO_FILE } from "./demo-seed";

export interface DemoWalkthroughInput {
  /** The API, without a trailing slash. */
  baseUrl: string;
  /** Written by demo:seed; a relative path is taken from where npm runs scripts, as demo:seed's `--out`. */
  demoFile: string;
  /** Mailpit's HTTP API, without a trailing slash. */
  mailpit: string;
}

/** Runs the README's walkthrough against a running system and checks every answer. */
export async function demoWalkthrough(ctx: OutputContext, input: DemoWalkthroughInput) {
  const demo = JSON.parse(await readFile(input.demoFile, "utf8")) as DemoFile;
  const steps: string[] = [];
  await runDemoStory({
    baseUrl: input.baseUrl,
    demo,
    mailbox: mailpitMailbox(input.mailpit),
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
  summary: "run the README walkthrough against a running system, checking every answer (after demo:seed)",
  flags: () => [
    new Option("--base-url <URL>", "the API (default http://localhost:8080)"),
    new Option("--demo-file <FILE>", `the values written by demo:seed (default ${DEFAULT_DEMO_FILE})`),
    new Option("--mailpit <URL>", "Mailpit, where the password-reset e-mail arrives (default http://localhost:8025)"),
  ],
  values: z.object({
    baseUrl: baseUrl.default("http://localhost:8080"),
    demoFile: text.default(DEFAULT_DEMO_FILE),
    mailpit: baseUrl.default("http://localhost:8025"),
  }),
  uses: "nothing",
  run: demoWalkthrough,
});
