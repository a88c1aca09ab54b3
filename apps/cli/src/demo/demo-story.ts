import { and, desc, eq, gte } from "drizzle-orm";
import { outgoingMessages, type DbHandle } from "@studyflow/db";
import { demoBulkRules } from "./demo-rules";
import type { DemoFile } from "./demo-seed";

/** Where the walkthrough finds the password-reset e-mail (Mailpit in compose, the outbox without it, an SMTP capture in tests). */
export interface Mailbox {
  /** The reset link of a password-reset e-mail to `email` that arrived after `since` (ms), within `timeoutMs`. */
  waitForResetLink(email: string, since: number, timeoutMs: number): Promise<string>;
}

export interface DemoStoryOptions {
  baseUrl: string;
  demo: DemoFile;
  mailbox: Mailbox;
  /** Printed after every step that passed. */
  report?: (line: string) => void;
  fetch?: typeof fetch;
  /** Longest wait for the bulk task and the e-mail. */
  timeoutMs?: number;
}

export class DemoStepFailed extends Error {}

function check(condition: unknown, step: string, detail: unknown): asserts condition {
  if (!condition) throw new DemoStepFailed(`${step}: unexpected answer ${JSON.stringify(detail)}`);
}

/**
 * The demo walkthrough (docs/demo.md) as a program: every operation against a running system, each answer
 * checked, so the walkthrough cannot silently rot. Order matters: the password reset comes last
 * because it retires the participant's token.
 */
export async function runDemoStory(options: DemoStoryOptions): Promise<void> {
  const http = options.fetch ?? fetch;
  const report = options.report ?? (() => undefined);
  const { demo } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const url = (path: string) => `${options.baseUrl}${path}`;
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
  ) => {
    const response = await http(url(path), {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // Event streams and errors of proxies are not JSON; the raw text is checked instead.
    }
    // The shape is what the step expects; every step checks the fields it relies on.
    return { status: response.status, json: json as Partial<T>, text };
  };
  const study = demo.studyKey;
  const researcher = demo.researcherToken;
  const participant = demo.participantToken;

  // 0. Profile 1 is in the study (entering again is harmless: an active participant stays as it is).
  const enter = await call("POST", `/v1/study-service/events/${study}/enter`, participant, {
    profileID: demo.profileIds[0],
  });
  check(enter.status === 200, "enter", enter.json);
  report("profile 1 is in the study");

  // 1. Submit the intake on behalf of the participant: the rules swap intake for weekly.
  const submit = await call<{ result: { surveyKey: string }[]; participant: { flags?: Record<string, string> } }>(
    "POST",
    `/v1/studies/${study}/participants/${demo.participantId}/responses`,
    researcher,
    {
      key: "intake",
      responses: [{ key: "sleep", response: { key: "hours", value: "7" } }],
    },
  );
  const surveys = (submit.json.result ?? []) as { surveyKey: string }[];
  check(submit.status === 200 && surveys.some((survey) => survey.surveyKey === "weekly"), "submit", submit.json);
  check(submit.json.participant?.flags?.intakeDone === "yes", "submit flags", submit.json.participant);
  report(`submitted the intake: surveys now ${surveys.map((survey) => survey.surveyKey).join(", ")}`);

  // 2. A bulk action over all participants: follow its progress stream, then read the result.
  const created = await call<{ task: { id: string } }>(
    "POST",
    `/v1/studies/${study}/run-actions/participants/`,
    researcher,
    {
      rules: demoBulkRules,
    },
  );
  check(created.status === 200, "run-actions", created.json);
  const taskId = created.json.task?.id ?? "";
  const taskPath = `/v1/studies/${study}/run-actions/participants/task/${taskId}`;
  const stream = await call("GET", `${taskPath}/events`, researcher);
  const updates = stream.text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => (JSON.parse(line.slice(6)) as { task: { status: string; processedCount: number } }).task);
  const last = updates.at(-1);
  check(stream.status === 200 && last?.status === "completed", "progress stream", updates.slice(-3));
  report(`bulk task ${taskId}: ${updates.length} progress events, ${last.processedCount} participants processed`);
  const result = await call<{ participantCount: number; participantStateChangedPerRule: number[] }>(
    "GET",
    `${taskPath}/result`,
    researcher,
  );
  check(result.status === 200 && typeof result.json.participantCount === "number", "task result", result.json);
  report(
    `result: ${result.json.participantCount} participants, changed per rule ${JSON.stringify(result.json.participantStateChangedPerRule)}`,
  );

  // 3. An anonymous temporary participant, claimed by profile 2.
  const temp = await call<{ participant: { studyStatus: string; participantId: string } }>(
    "POST",
    "/v1/study-service/temp-participant/register",
    undefined,
    { studyKey: study },
  );
  check(temp.status === 200 && temp.json.participant?.studyStatus === "temporary", "temp register", temp.json);
  const merge = await call<{ assignedSurveys: unknown[] }>(
    "POST",
    `/v1/study-service/events/${study}/merge-temporary-participant`,
    participant,
    {
      profileID: demo.profileIds[1],
      temporaryParticipantID: temp.json.participant.participantId,
    },
  );
  check(merge.status === 200 && Array.isArray(merge.json.assignedSurveys), "merge", merge.json);
  report(`merged a temporary participant into profile 2: ${merge.json.assignedSurveys.length} survey(s)`);

  // 4. Profile 1 leaves: LEAVE removes every survey.
  const leave = await call<{ assignedSurveys: unknown[] }>(
    "POST",
    `/v1/study-service/events/${study}/leave`,
    participant,
    {
      profileID: demo.profileIds[0],
    },
  );
  check(leave.status === 200 && leave.json.assignedSurveys?.length === 0, "leave", leave.json);
  report("profile 1 left the study: no surveys remain");

  // 5. Account tracking on, then off again.
  for (const value of [true, false]) {
    const toggled = await call<{ message: string }>("PUT", `/v1/studies/${study}/track-account`, researcher, {
      trackAccount: value,
    });
    check(
      toggled.status === 200 && String(toggled.json.message).includes(value ? " on " : " off "),
      "track",
      toggled.json,
    );
  }
  report("account tracking switched on and off");

  // 6. Password reset through the e-mail.
  // Real time, not a clock of the system's: the story drives a running API and reads Mailpit, whose
  // mails carry the time they arrived.
  const since = Date.now();
  const initiate = await call("POST", "/v1/password-reset/initiate", undefined, { email: demo.userEmail });
  check(initiate.status === 200, "reset initiate", initiate.json);
  const link = await options.mailbox.waitForResetLink(demo.userEmail, since, timeoutMs);
  const token = new URL(link).searchParams.get("token");
  check(token, "reset link", link);
  const newPassword = `Walkthrough-${Math.random().toString(36).slice(2, 8)}-Pw9!`;
  const reset = await call("POST", "/v1/password-reset/reset", undefined, { token, newPassword });
  check(reset.status === 200, "reset", reset.json);
  const reused = await call("POST", "/v1/password-reset/reset", undefined, { token, newPassword });
  check(reused.status === 400, "reset token reuse", reused.json);
  report("password reset through the e-mailed link; the link works once");
}

/** Mailpit's HTTP API (compose's SMTP sink). */
export function mailpitMailbox(baseUrl: string, http: typeof fetch = fetch): Mailbox {
  return {
    async waitForResetLink(email, since, timeoutMs) {
      // A wait for an outside service: real time, as every timeout.
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const list = (await (await http(`${baseUrl}/api/v1/messages?limit=50`)).json()) as {
          messages?: { ID: string; To?: { Address: string }[]; Created: string; Subject: string }[];
        };
        const match = (list.messages ?? []).find(
          (message) =>
            message.To?.some((to) => to.Address.toLowerCase() === email) &&
            Date.parse(message.Created) >= since - 1_000,
        );
        if (match) {
          const body = (await (await http(`${baseUrl}/api/v1/message/${match.ID}`)).json()) as { Text?: string };
          const link = /https?:\/\/\S+token=[A-Za-z0-9_-]+/.exec(body.Text ?? "")?.[0];
          if (link) return link;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new DemoStepFailed(`reset e-mail: nothing arrived for ${email} within ${timeoutMs} ms`);
    },
  };
}

/**
 * The outbox itself, for systems without an SMTP sink (`npm start` without SMTP_URL): the reset
 * e-mail waits there as a row whose payload holds the link. Nothing sends it there; a row that is
 * sent, failed or expired no longer holds the link (SECRET_PAYLOAD_FIELDS).
 */
export function outboxMailbox(database: DbHandle): Mailbox {
  return {
    async waitForResetLink(email, since, timeoutMs) {
      // A wait for an outside service: real time, as every timeout.
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const [row] = await database.db
          .select({ payload: outgoingMessages.payload })
          .from(outgoingMessages)
          .where(
            and(
              eq(outgoingMessages.template, "password-reset"),
              eq(outgoingMessages.toAddress, email),
              gte(outgoingMessages.createdAt, new Date(since - 1_000)),
            ),
          )
          .orderBy(desc(outgoingMessages.createdAt))
          .limit(1);
        const link = row?.payload["resetUrl"];
        if (typeof link === "string") return link;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new DemoStepFailed(
        `reset e-mail: no password-reset message for ${email} in the outbox within ${timeoutMs} ms ` +
          "(is DATABASE_URL the database the API writes to?)",
      );
    },
  };
}
