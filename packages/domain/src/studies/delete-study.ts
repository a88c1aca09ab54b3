import { and, eq, sql } from "drizzle-orm";
import {
  outgoingMessages,
  participantEntryBuckets,
  permissions,
  responseArrivalBuckets,
  studies,
  storedFiles,
  studyParticipantCounts,
  type Executor,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { NotFound } from "../errors";
import type { FileStore, StoredFileRow } from "../files/file-store";

export interface DeletedStudy {
  studyKey: string;
  /** What went with it, as recorded in the audit log. */
  removed: { participants: number; responses: number; permissions: number; pendingMessages: number };
  /**
   * The study's stored files (exports, participant uploads), whose records are gone: a file store
   * that keeps bytes outside the database removes them after the commit (removeStudyFiles).
   */
  files: StoredFileRow[];
}

/**
 * Deletes a study and everything it holds, in one transaction: all or nothing, never half a study.
 * The study row's own tables go with it (participants, responses, reports, surveys, rules, files,
 * tasks, code lists, counters, variables, templates, subscriptions, timers, scheduled e-mails…);
 * the rows that name the study without a reference to it go too: the permissions for the study,
 * its participant counts and the messages to its participants not sent yet. The audit log keeps
 * its entries and gets `study.delete` with the counts. The row lock waits for participant events
 * in flight (they hold a share lock on the study).
 *
 * @throws NotFound for an unknown study (nothing written).
 */
export async function deleteStudy(db: Executor, studyKey: string, actor: string): Promise<DeletedStudy> {
  const result = await db.transaction(async (tx) => {
    const [study] = await tx
      .select({ key: studies.key })
      .from(studies)
      .where(eq(studies.key, studyKey))
      .for("update")
      .limit(1);
    if (!study) throw new NotFound(`study "${studyKey}" not found`);
    const [sizes] = await tx.execute<{ participants: string; responses: string }>(sql`
      select (select count(*) from participants where study_key = ${studyKey}) as participants,
             (select count(*) from survey_responses where study_key = ${studyKey}) as responses`);
    const files = await tx.select().from(storedFiles).where(eq(storedFiles.studyKey, studyKey));
    await tx.delete(studies).where(eq(studies.key, studyKey));
    // after the cascade: its triggers keep these counts while the participants go
    await tx.delete(studyParticipantCounts).where(eq(studyParticipantCounts.studyKey, studyKey));
    await tx.delete(participantEntryBuckets).where(eq(participantEntryBuckets.studyKey, studyKey));
    await tx.delete(responseArrivalBuckets).where(eq(responseArrivalBuckets.studyKey, studyKey));
    const grants = await tx
      .delete(permissions)
      .where(and(eq(permissions.resourceType, "study"), eq(permissions.studyKey, studyKey)))
      .returning({ subjectId: permissions.subjectId });
    const messages = await tx
      .delete(outgoingMessages)
      .where(and(eq(outgoingMessages.studyKey, studyKey), eq(outgoingMessages.status, "pending")))
      .returning({ id: outgoingMessages.id });
    const removed = {
      participants: Number(sizes?.participants ?? 0),
      responses: Number(sizes?.responses ?? 0),
      permissions: grants.length,
      pendingMessages: messages.length,
    };
    await recordAudit(tx, { studyKey, actor, action: "study.delete", details: removed });
    return { removed, files, subjects: [...new Set(grants.map((grant) => grant.subjectId))] };
  });
  forgetCached(db, "study", studyKey);
  for (const subject of result.subjects) forgetCached(db, "grants", subject);
  return { studyKey, removed: result.removed, files: result.files };
}

/**
 * Removes the bytes of a deleted study's files from a store that keeps them outside the database
 * (the postgres store's parts went with their records). A failure leaves unreachable bytes only:
 * it is reported, never undoes the deletion.
 */
export async function removeStudyFiles(
  db: Executor,
  store: FileStore | undefined,
  files: readonly StoredFileRow[],
): Promise<number> {
  if (!store || store.backend === "postgres") return 0;
  let failed = 0;
  for (const file of files) {
    try {
      await store.removeContents(db, file);
    } catch {
      failed += 1;
    }
  }
  return failed;
}
