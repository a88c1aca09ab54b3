import { and, desc, eq, sql } from "drizzle-orm";
import { outgoingMessages, type Executor, type OutgoingMessageStatus } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";
import {
  decodePageCursor,
  encodePageCursor,
  exactInstant,
  invalidCursor,
  isExactAt,
  type Page,
} from "../study-config/page-cursor";

/**
 * A study's e-mail as researchers see it: what it was (its template: a participant message type,
 * or `researcher-notification`), where delivery stands and why it failed. Never the address or
 * the payload: those would tie the pseudonymous participant to a person.
 */
export interface StudyMessage {
  id: string;
  template: string;
  status: OutgoingMessageStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  expiresAt: Date | null;
}

const createdExactly = exactInstant(outgoingMessages.createdAt);

/**
 * One page of the e-mails a study's rules and notifications caused, newest first, optionally of
 * one status (`failed`: a missing template, no recipient, refused by the mail server).
 */
export async function listStudyMessages(
  db: Executor,
  studyKey: string,
  page: { limit: number; cursor?: string; status?: OutgoingMessageStatus },
): Promise<Page<StudyMessage>> {
  await getStudy(db, studyKey);
  const before = page.cursor === undefined ? undefined : decodePageCursor(page.cursor, ["string", "string"]);
  if (before && (!isExactAt(String(before[0])) || !/^[0-9a-f-]{36}$/i.test(String(before[1])))) {
    throw invalidCursor();
  }
  const rows = await db
    .select({
      id: outgoingMessages.id,
      template: outgoingMessages.template,
      status: outgoingMessages.status,
      attempts: outgoingMessages.attempts,
      lastError: outgoingMessages.lastError,
      createdAt: outgoingMessages.createdAt,
      sentAt: outgoingMessages.sentAt,
      expiresAt: outgoingMessages.expiresAt,
      createdExactly,
    })
    .from(outgoingMessages)
    .where(
      and(
        eq(outgoingMessages.studyKey, studyKey),
        page.status === undefined ? undefined : eq(outgoingMessages.status, page.status),
        before === undefined
          ? undefined
          : sql`(${outgoingMessages.createdAt}, ${outgoingMessages.id}) < (${String(before[0])}::timestamptz, ${String(before[1])}::uuid)`,
      ),
    )
    .orderBy(desc(outgoingMessages.createdAt), desc(outgoingMessages.id))
    .limit(page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return {
    items: items.map(({ createdExactly: _exact, ...message }) => message),
    nextCursor: rows.length > page.limit && last ? encodePageCursor([last.createdExactly, last.id]) : null,
  };
}
