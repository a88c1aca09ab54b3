import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxMailbox, runDemoStory, seedDemo, type Mailbox } from "@studyflow/cli/demo";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { systemClock } from "@studyflow/domain/foundation";

interface CapturedMail {
  to: string[];
  text: string;
  at: number;
}

/** Undoes quoted-printable soft line breaks and escapes, so links in the raw message can be found. */
function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The walkthrough of docs/demo.md (`npm run demo`) against the test services: API, worker, outbox to a real SMTP server. */
describe("the demo walkthrough", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let smtp: SMTPServer;
  const mails: CapturedMail[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          mails.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
            text: decodeQuotedPrintable(Buffer.concat(chunks).toString("utf8")),
            at: Date.now(),
          });
          callback();
        });
      },
    });
    const smtpPort = await new Promise<number>((resolve) => {
      smtp.listen(0, "127.0.0.1", () => resolve((smtp.server.address() as { port: number }).port));
    });
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-demo-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    worker = startWorkerBesideApi(t, resultDir, {
      mail: {
        smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
        from: "studyflow <no-reply@studyflow.test>",
        pollIntervalMs: 100,
      },
    });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("runs every step against the seeded demo and each answer checks out", async () => {
    const demo = await seedDemo(t.database, t.config, { clock: systemClock }, 500);
    const mailbox: Mailbox = {
      async waitForResetLink(email, since, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        while (Date.now() < deadline) {
          const mail = mails.find((candidate) => candidate.to.includes(email) && candidate.at >= since);
          const link = mail && /https?:\/\/\S+?token=[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
          if (link) return link;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`no reset e-mail for ${email}`);
      },
    };
    const steps: string[] = [];
    await runDemoStory({
      baseUrl: "http://studyflow.test",
      demo,
      mailbox,
      fetch: async (input, init) => t.app.request(input instanceof Request ? input : input.toString(), init),
      report: (line) => steps.push(line),
      timeoutMs: 30_000,
    });
    expect(steps).toHaveLength(8);
    expect(steps.join("\n")).toMatch(/bulk task .*: \d+ progress events, 501 participants processed/);
    // The seed is idempotent: a second run keeps the study and mints fresh, working tokens.
    const again = await seedDemo(t.database, t.config, { clock: systemClock }, 500);
    expect(again.studyKey).toBe(demo.studyKey);
    expect(again.profileIds).toEqual(demo.profileIds);
  });
});

/** `npm start` without SMTP_URL, then `npm run demo`: no Mailpit, the reset link comes from the outbox. */
describe("the demo walkthrough without an SMTP server", () => {
  let t: TestApp;
  let worker: ReturnType<typeof startWorkerBesideApi>;

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-demo-outbox-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    worker = startWorkerBesideApi(t, resultDir);
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
  });

  it("passes every step, reading the reset link from the outbox", async () => {
    const demo = await seedDemo(t.database, t.config, { clock: systemClock }, 200);
    const steps: string[] = [];
    await runDemoStory({
      baseUrl: "http://studyflow.test",
      demo,
      mailbox: outboxMailbox(t.database),
      fetch: async (input, init) => t.app.request(input instanceof Request ? input : input.toString(), init),
      report: (line) => steps.push(line),
      timeoutMs: 30_000,
    });
    expect(steps).toHaveLength(8);
    expect(steps.at(-1)).toMatch(/password reset/);
  });
});
