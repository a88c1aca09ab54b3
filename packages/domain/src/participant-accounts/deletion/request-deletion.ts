import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import {
  accountDeletions,
  participants,
  type AccountDeletionReason,
  profiles,
  studies,
  surveyVersions,
  users,
  type Database,
  type Executor,
} from "@studyflow/db";
import { recordAudit } from "../../foundation/audit";
import { NotFound } from "../../errors";
import { storeResponse } from "../../events/store-response";
import { SUBMITTED_BY_PARTICIPANT, type SubmittedResponse } from "../../events/submit-response";
import { participantIdsInStudy } from "../../participants/participant-ids";
import { revokeUserSessions } from "../../participant-sessions/session-revocation";

export type AccountDeletionRow = typeof accountDeletions.$inferSelect;

export interface RequestAccountDeletionInput {
  userId: string;
  now: Date;
  /** The participant's answer to the exit survey (CASE's `exitSurveyResponse`), if the app sent one. */
  exitSurveyResponse?: SubmittedResponse | undefined;
  /** An operator who asked for it (management subject); recorded in the audit log. Absent: the participant. */
  operator?: string | undefined;
  /** Why it goes (default `requested`): picks the confirmation mail the deletion task sends. */
  reason?: AccountDeletionReason | undefined;
}

export interface RequestedAccountDeletion {
  deletion: AccountDeletionRow;
  /** False when the account's deletion had been requested before (the same row, unchanged). */
  created: boolean;
  /** Studies the exit survey response was stored in. */
  exitSurveyStoredIn: string[];
}

/**
 * Starts an account's deletion, in one transaction: the account is marked, every session is
 * revoked (the token version moves on, so access tokens die at once), the exit survey response
 * is stored, and the account_deletions row the deletion task works from is inserted. The caller
 * queues the task after the commit (queueAccountDeletion); a lost enqueue is found by the sweeper.
 * Asking again while a deletion is under way changes nothing and answers the same row.
 *
 * @throws NotFound when the account does not exist (or is already deleted).
 */
export async function requestAccountDeletion(
  db: Database,
  input: RequestAccountDeletionInput,
): Promise<RequestedAccountDeletion> {
  return db.transaction((tx) => requestAccountDeletionIn(tx, input));
}

/**
 * {@link requestAccountDeletion} inside the caller's transaction, for callers that decide on
 * several accounts in one (the worker's account lifecycle rounds).
 */
export async function requestAccountDeletionIn(
  tx: Executor,
  input: RequestAccountDeletionInput,
): Promise<RequestedAccountDeletion> {
  const [user] = await tx
    .select({ id: users.id, deletionRequestedAt: users.deletionRequestedAt })
    .from(users)
    .where(eq(users.id, input.userId))
    .for("update")
    .limit(1);
  if (!user) throw new NotFound("account not found");
  const [existing] = await tx.select().from(accountDeletions).where(eq(accountDeletions.userId, user.id)).limit(1);
  if (existing && user.deletionRequestedAt) {
    // Still signed out everywhere: a session opened since (it cannot be, but) ends too.
    await revokeUserSessions(tx, user.id, "account-deleted", { now: input.now });
    return { deletion: existing, created: false, exitSurveyStoredIn: [] };
  }
  await tx.update(users).set({ deletionRequestedAt: input.now }).where(eq(users.id, user.id));
  await revokeUserSessions(tx, user.id, "account-deleted", { now: input.now });
  const exitSurveyStoredIn = input.exitSurveyResponse
    ? await storeExitSurveyResponse(tx, user.id, input.exitSurveyResponse, input.now)
    : [];
  const [deletion] = await tx
    .insert(accountDeletions)
    .values({ userId: user.id, status: "pending", reason: input.reason ?? "requested", createdAt: input.now })
    .onConflictDoUpdate({
      // A row left by an earlier request (never for a live account, but the table has no foreign key)
      target: accountDeletions.userId,
      set: { status: "pending", error: null, finishedAt: null, reason: input.reason ?? "requested" },
    })
    .returning();
  if (!deletion) throw new Error("account deletion row was not written");
  await recordAudit(
    tx,
    {
      studyKey: null,
      actor: input.operator ?? "participant",
      action: "participant-user.delete-request",
      target: user.id,
      details: {
        deletionId: deletion.id,
        exitSurveyStudies: exitSurveyStoredIn.length,
        ...(input.reason && input.reason !== "requested" ? { reason: input.reason } : {}),
      },
    },
    input.now,
  );
  return { deletion, created: true, exitSurveyStoredIn };
}

/**
 * case-backend stores the exit survey response, under the main profile's participant id, in the
 * instance's "system default study" without running rules. studyflow has no such study, so the
 * response goes to each study that has a survey of that key and in which the main profile takes
 * part: the studies that asked the question. Stored as any response is (confidential items apart),
 * before the LEAVE events, as case-backend orders it.
 */
async function storeExitSurveyResponse(
  tx: Executor,
  userId: string,
  response: SubmittedResponse,
  now: Date,
): Promise<string[]> {
  const [main] = await tx
    .select({ id: profiles.id })
    .from(profiles)
    .where(and(eq(profiles.userId, userId), eq(profiles.mainProfile, true)))
    .limit(1);
  if (!main || !response.key) return [];
  const asking = await tx
    .selectDistinct({ key: studies.key, secret: studies.secret, idMappingMethod: studies.idMappingMethod })
    .from(studies)
    .innerJoin(surveyVersions, eq(surveyVersions.studyKey, studies.key))
    .where(eq(surveyVersions.surveyKey, response.key));
  const stored: string[] = [];
  for (const study of asking) {
    const ids = participantIdsInStudy(study, main.id);
    const [participant] = await tx
      .select({ session: participants.currentStudySession })
      .from(participants)
      .where(and(eq(participants.studyKey, study.key), eq(participants.participantId, ids.participantId)))
      .limit(1);
    if (!participant) continue;
    await storeResponse(
      tx,
      study.key,
      {
        id: randomUUID(),
        key: response.key,
        participantId: ids.participantId,
        versionId: response.versionId ?? "",
        openedAt: response.openedAt ?? 0,
        submittedAt: response.submittedAt ?? 0,
        arrivedAt: Math.floor(now.getTime() / 1000),
        responses: response.responses ?? [],
        context: { ...response.context, submittedBy: SUBMITTED_BY_PARTICIPANT },
      },
      ids,
      participant.session,
    );
    stored.push(study.key);
  }
  return stored;
}
