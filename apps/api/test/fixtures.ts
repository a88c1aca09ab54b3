import { and, eq } from "drizzle-orm";
import { outgoingMessages, participants, users, type Database } from "@studyflow/db";
import { mintManagementToken, mintParticipantToken } from "@studyflow/domain/access";
import { participantIdsForProfile } from "@studyflow/domain/participants";
import {
  createStudy,
  createUserWithProfiles,
  grantPermission,
  setStudyRules,
  type CreateStudyInput,
} from "@studyflow/domain/study-setup";
import type { Expression } from "@studyflow/engine";
import type { TestApp } from "./test-app";

export { call, exp, num, onEvent, str } from "@studyflow/testkit";

export const STRONG_PASSWORD = "Correct-Horse-Battery-9";

export async function setupStudy(t: TestApp, input: Partial<CreateStudyInput> & { rules?: Expression[] } = {}) {
  const study = await createStudy(t.database.db, { key: input.key ?? "study-a", ...input });
  if (input.rules) await setStudyRules(t.database.db, study.key, input.rules, "test");
  return study;
}

export async function managementToken(t: TestApp, subject: string, isAdmin = false, ttlSeconds?: number) {
  return mintManagementToken({
    now: Date.now(),
    subject,
    isAdmin,
    secret: t.config.MANAGEMENT_JWT_SECRET,
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
  });
}

/** A researcher holding one permission on one study, with a token. */
export async function researcher(t: TestApp, studyKey: string, action: Parameters<typeof grantPermission>[3]) {
  const subject = `researcher-${Math.random().toString(36).slice(2, 10)}`;
  await grantPermission(t.database.db, subject, studyKey, action);
  return { subject, token: await managementToken(t, subject) };
}

/** A participant user with profiles and a token. */
export async function participantUser(t: TestApp, profiles = ["main"], email?: string) {
  const created = await createUserWithProfiles(t.database.db, {
    now: new Date(),
    email: email ?? `user-${Math.random().toString(36).slice(2, 10)}@example.org`,
    password: STRONG_PASSWORD,
    profiles,
  });
  const token = await mintParticipantToken({
    now: Date.now(),
    userId: created.user.id,
    tokenVersion: created.user.tokenVersion,
    secret: t.config.PARTICIPANT_JWT_SECRET,
  });
  return { ...created, token };
}

export function participantIdOf(study: { secret: string }, profileId: string) {
  return participantIdsForProfile(study.secret, profileId).participantId;
}

export async function readParticipant(db: Database, studyKey: string, participantId: string) {
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)));
  return row;
}

export async function insertParticipant(
  db: Database,
  values: { studyKey: string; participantId: string; studyStatus?: string; enteredAt?: number } & Partial<
    typeof participants.$inferInsert
  >,
) {
  const enteredAt = values.enteredAt ?? Math.floor(Date.now() / 1000);
  const [row] = await db
    .insert(participants)
    .values({ studyStatus: "active", modifiedAt: enteredAt, ...values, enteredAt })
    .returning();
  return row!;
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function postJson(
  t: TestApp,
  path: string,
  body: unknown,
  token?: string,
  method = "POST",
  headers: Record<string, string> = {},
) {
  return await t.app.request(path, {
    method,
    headers: { "Content-Type": "application/json", ...(token ? bearer(token) : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A JSON body sent as text/plain, as CASE participant apps send it. */
export function caseRequest(
  t: TestApp,
  method: string,
  path: string,
  body: unknown,
  token?: string,
  headers: Record<string, string> = {},
) {
  return t.app.request(path, {
    method,
    headers: { "content-type": "text/plain;charset=UTF-8", ...headers, ...(token ? bearer(token) : {}) },
    body: JSON.stringify(body),
  });
}

export async function userRow(t: TestApp, id: string) {
  const [row] = await t.database.db.select().from(users).where(eq(users.id, id));
  return row!;
}

/** The outbox rows of one template queued for a user. */
export async function queuedMails(t: TestApp, userId: string, template: string) {
  return t.database.db
    .select()
    .from(outgoingMessages)
    .where(and(eq(outgoingMessages.userId, userId), eq(outgoingMessages.template, template)));
}

/** A LEAVE rule as a researcher uploads it (CASE JSON): the flag `key` set to `value`, and a "goodbye" report. */
export function caseLeaveRule(key: string, value: string): Expression {
  return JSON.parse(`{
  "name": "IFTHEN",
  "data": [
    { "dtype": "exp", "exp": { "name": "checkEventType", "data": [{ "dtype": "str", "str": "LEAVE" }] } },
    { "dtype": "exp", "exp": { "name": "UPDATE_FLAG", "data": [{ "dtype": "str", "str": ${JSON.stringify(key)} }, { "dtype": "str", "str": ${JSON.stringify(value)} }] } },
    { "dtype": "exp", "exp": { "name": "INIT_REPORT", "data": [{ "dtype": "str", "str": "goodbye" }] } }
  ]
}`) as Expression;
}
