import { and, eq } from "drizzle-orm";
import { outgoingMessages, type Executor, type OutgoingMessageStatus } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";
import { newestFirst, type Page } from "../study-config/page-cursor";

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

const paging = newestFirst(outgoingMessages.createdAt, outgoingMessages.id, "uuid");

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
  const olderThan = paging.olderThan(page.cursor);
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
      createdExactly: paging.exact,
    })
    .from(outgoingMessages)
    .where(
      and(
        eq(outgoingMessages.studyKey, studyKey),
        page.status === undefined ? undefined : eq(outgoingMessages.status, page.status),
        olderThan,
      ),
    )
    .orderBy(...paging.orderBy)
    .limit(page.limit + 1);
  return paging.pageOf(
    rows,
    page.limit,
    (row) => [row.createdExactly, row.id],
    ({ createdExactly: _exact, ...message }) => message,
  );
}
