import type { ParticipantState } from "@studyflow/engine";
import { and, eq, sql } from "drizzle-orm";
import { surveyResponses, type Database } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Conflict, Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { lockParticipant, saveParticipantState, toEngineState, type ParticipantRow } from "./participant-repository";

/** The state a researcher writes over a participant's (case-admin's participant editor). */
export interface EditedParticipantState extends Omit<ParticipantState, "modifiedAt" | "participantId"> {
  /** The stored modifiedAt the editor read; 0: write whatever is stored now. */
  modifiedAt: number;
  /** Sent back as read; a different value is refused (the account link is not the editor's to change). */
  hashedAccountId?: string | undefined;
  isMainProfile?: boolean | undefined;
}

export interface EditParticipantInput {
  studyKey: string;
  participantId: string;
  state: EditedParticipantState;
  /** The management subject, for the audit log. */
  actor: string;
}

const EDITABLE_FIELDS = [
  "currentStudySession",
  "enteredAt",
  "studyStatus",
  "flags",
  "linkingCodes",
  "assignedSurveys",
  "lastSubmissions",
  "messages",
] as const satisfies readonly (keyof ParticipantState)[];

/**
 * Replaces a participant's state with the one a researcher edited, as case-backend's participant
 * editor does: only when the stored state is not newer than the one the editor read (409
 * otherwise, where case-backend answers 500), never its id or its account link. Saved through
 * saveParticipantState, so its message schedule follows its messages; audited with the names of
 * the fields that changed (and the status change), in the same transaction.
 */
export async function editParticipantState(
  db: Database,
  input: EditParticipantInput,
  now: number,
): Promise<ParticipantRow> {
  return db.transaction(async (tx) => {
    await getStudy(tx, input.studyKey);
    const row = await lockParticipant(tx, input.studyKey, input.participantId);
    if (!row) throw new NotFound(`participant "${input.participantId}" not found in study "${input.studyKey}"`);
    const { state } = input;
    if (state.modifiedAt > 0 && row.modifiedAt > state.modifiedAt) {
      throw new Conflict(
        `participant was changed at ${row.modifiedAt}, after the state sent (modifiedAt ${state.modifiedAt}); read it again`,
      );
    }
    if (state.hashedAccountId !== undefined && state.hashedAccountId !== (row.hashedAccountId ?? "")) {
      throw new Invalid("hashedAccountID: cannot be changed");
    }
    if (state.isMainProfile !== undefined && state.isMainProfile !== (row.isMainProfile ?? false)) {
      throw new Invalid("isMainProfile: cannot be changed");
    }
    const before = toEngineState(row);
    const after: ParticipantState = { ...before };
    for (const field of EDITABLE_FIELDS) (after as unknown as Record<string, unknown>)[field] = state[field];
    const saved = await saveParticipantState(tx, row, after, now);
    const changed = EDITABLE_FIELDS.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
    await recordAudit(tx, {
      studyKey: input.studyKey,
      actor: input.actor,
      action: "participant.update",
      target: input.participantId,
      details: {
        changed,
        ...(before.studyStatus !== after.studyStatus ? { studyStatus: [before.studyStatus, after.studyStatus] } : {}),
      },
    });
    return saved;
  });
}

export interface RemoveSessionInput {
  studyKey: string;
  participantId: string;
  sessionToRemove: string;
  /** "": the responses and the participant are left without a session. */
  replacementSession: string;
  actor: string;
}

/**
 * Takes a study session off a participant, as case-backend's remove-session does: its current
 * session, when it is the one removed, becomes the replacement, and every response it recorded
 * under that session (context.session) is relabelled. One transaction, audited
 * (`participant.remove-session`).
 */
export async function removeStudySession(
  db: Database,
  input: RemoveSessionInput,
  now: number,
): Promise<{ participant: ParticipantRow; responsesUpdated: number }> {
  if (input.sessionToRemove === "") throw new Invalid("sessionToRemove is required");
  return db.transaction(async (tx) => {
    await getStudy(tx, input.studyKey);
    const row = await lockParticipant(tx, input.studyKey, input.participantId);
    if (!row) throw new NotFound(`participant "${input.participantId}" not found in study "${input.studyKey}"`);
    const participant =
      row.currentStudySession === input.sessionToRemove
        ? await saveParticipantState(
            tx,
            row,
            { ...toEngineState(row), currentStudySession: input.replacementSession },
            now,
          )
        : row;
    const relabelled = await tx
      .update(surveyResponses)
      .set({
        context: sql`jsonb_set(${surveyResponses.context}, '{session}', to_jsonb(${input.replacementSession}::text))`,
      })
      .where(
        and(
          eq(surveyResponses.studyKey, input.studyKey),
          eq(surveyResponses.participantId, input.participantId),
          sql`${surveyResponses.context}->>'session' = ${input.sessionToRemove}`,
        ),
      )
      .returning({ id: surveyResponses.id });
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: "participant.remove-session",
        target: input.participantId,
        details: {
          sessionToRemove: input.sessionToRemove,
          replacementSession: input.replacementSession,
          responsesUpdated: relabelled.length,
        },
      },
      new Date(now * 1000),
    );
    return { participant, responsesUpdated: relabelled.length };
  });
}
