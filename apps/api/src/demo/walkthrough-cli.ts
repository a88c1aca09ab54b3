import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { DemoStepFailed, mailpitMailbox, runDemoStory } from "./demo-story";
import type { DemoFile } from "./demo-seed";

/**
 * `npm run demo -- [--base-url URL] [--demo-file FILE] [--mailpit URL]`: runs the README's
 * walkthrough against a running system and checks every answer.
 */
const { values } = parseArgs({
  options: {
    "base-url": { type: "string", default: "http://localhost:8080" },
    "demo-file": { type: "string", default: "var/demo/demo.json" },
    mailpit: { type: "string", default: "http://localhost:8025" },
  },
});
try {
  const demo = JSON.parse(await readFile(values["demo-file"], "utf8")) as DemoFile;
  await runDemoStory({
    baseUrl: values["base-url"].replace(/\/$/, ""),
    demo,
    mailbox: mailpitMailbox(values.mailpit.replace(/\/$/, "")),
    report: (line) => console.log(`✓ ${line}`),
  });
  console.log("walkthrough passed");
} catch (error) {
  const message = error instanceof DemoStepFailed || error instanceof Error ? error.message : String(error);
  console.error(`✗ ${message}`);
  process.exitCode = 1;
}
