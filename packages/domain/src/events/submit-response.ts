import { randomUUID } from "node:crypto";
import type { SurveyItemResponse } from "@studyflow/engine";
import type { Database, Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { participantIdsInStudy, participantIdsOf, type ParticipantIds } from "../participants/participant-ids";
import type { ParticipantRow } from "../participants/participant-repository";
import { studyForEvent, type StudyRow } from "../studies/study-repository";
import { lockEventParticipant } from "../participants/participant-repository";
import { checkResponseVersion } from "./response-version-check";
import { applyEvent } from "./apply-event";
import { inEventTransaction, type DomainContext } from "./event-runner";
import { nowSeconds } from "../foundation/clock";
import { recordRuleFailures, type RuleFailureRecord } from "./rule-failures";
import type { ArrivedResponse } from "./store-response";

export interface SubmittedResponse {
  key: string;
  versionId?: string;
  openedAt?: number;
  submittedAt?: number;
  responses?: SurveyItemResponse[];
  context?: Record<string, string>;
}

/**
 * Whom a participant event is for: a participant by id (a researcher acting on its behalf), or
 * the participant of a profile (the signed-in participant itself).
 */
export type EventParticipant = { participantId: string } | { profileId: string };

/**
 * A temporary participant submitting for itself (CASE's anonymous flow): its id is its only
 * credential, so it must still be temporary and younger than maxAgeSeconds.
 */
export interface TemporarySubmitter {
  temporaryParticipantId: string;
  maxAgeSeconds: number;
}

export type SubmitResponseInput = (EventParticipant | TemporarySubmitter) & {
  studyKey: string;
  response: SubmittedResponse;
  /**
   * Recorded as context.submittedBy: a researcher's subject, or SUBMITTED_BY_PARTICIPANT.
   */
  submittedBy: string;
};

/**
 * context.submittedBy of a response the participant submitted itself. Deliberately no profile or
 * user id: stored responses are exported under the pseudonymous participant id, and an account
 * identifier beside it would link them back to the person.
 */
export const SUBMITTED_BY_PARTICIPANT = "participant";

export interface SubmitResponseResult {
  participant: ParticipantRow;
  responseId: string | null;
  /** Rules that failed for this submission, and an unknown versionId; the response was stored all the same. */
  warnings: RuleFailureRecord[];
}

/** Statuses that no longer take responses: deleted accounts, and anonymous pre-registrations. */
const CLOSED_STATUSES = new Set(["accountDeleted", "temporary"]);

/**
 * Locks the participant of a profile for an event of its own: it must exist (NotFound) and be
 * active (Conflict), as only an active participant acts in a study.
 */
export async function lockProfileParticipant(
  tx: Executor,
  study: StudyRow,
  profileId: string,
): Promise<{ row: ParticipantRow; ids: ParticipantIds }> {
  const ids = participantIdsInStudy(study, profileId);
  const row = await lockEventParticipant(
    tx,
    study,
    ids.participantId,
    () => new NotFound(`profile is not a participant of study "${study.key}"`),
  );
  if (row.studyStatus !== "active") {
    throw new Conflict(`participant is not active in study "${study.key}" (status "${row.studyStatus}")`);
  }
  return { row, ids };
}

/**
 * Locks a temporary participant for a response of its own. Unknown and no longer temporary (merged
 * ids are gone; a guessed id of another participant) answer alike, so the route tells nothing
 * about ids that are not temporary participants.
 */
async function lockTemporarySubmitter(tx: Executor, study: StudyRow, who: TemporarySubmitter, now: number) {
  const notFound = () => new NotFound(`temporary participant not found in study "${study.key}"`);
  const row = await lockEventParticipant(tx, study, who.temporaryParticipantId, notFound);
  if (row.studyStatus !== "temporary") throw notFound();
  if (now - row.enteredAt > who.maxAgeSeconds) {
    throw new Conflict("temporary participant is too old to submit responses; register again");
  }
  return { row, ids: participantIdsOf(study, row.participantId) };
}

async function lockSubmitter(tx: Executor, study: StudyRow, who: SubmitResponseInput, now: number) {
  if ("temporaryParticipantId" in who) return lockTemporarySubmitter(tx, study, who, now);
  if ("profileId" in who) return lockProfileParticipant(tx, study, who.profileId);
  const row = await lockEventParticipant(
    tx,
    study,
    who.participantId,
    () => new NotFound(`participant "${who.participantId}" not found in study "${study.key}"`),
  );
  if (CLOSED_STATUSES.has(row.studyStatus)) {
    throw new Conflict(`participant "${who.participantId}" has status "${row.studyStatus}" and takes no responses`);
  }
  return { row, ids: participantIdsOf(study, row.participantId) };
}

/**
 * Submits a response, by a researcher on behalf of a participant or by the participant itself
 * (a profile's, or a temporary participant's):
 * the versionId check, the SUBMIT rules, the new state, the response, its confidential items,
 * reports and messages commit together or not at all.
 */
export async function submitResponse(
  db: Database,
  input: SubmitResponseInput,
  ctx: DomainContext,
): Promise<SubmitResponseResult> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await studyForEvent(tx, input.studyKey, eventCtx.cache);
    const { row, ids } = await lockSubmitter(tx, study, input, nowSeconds(ctx));
    const unknownVersion = await checkResponseVersion(tx, {
      studyKey: study.key,
      config: study.config,
      participantId: row.participantId,
      surveyKey: input.response.key,
      versionId: input.response.versionId,
    });
    const arrivedAt = nowSeconds(ctx);
    const response: ArrivedResponse = {
      id: randomUUID(),
      key: input.response.key,
      participantId: row.participantId,
      versionId: input.response.versionId ?? "",
      openedAt: input.response.openedAt ?? 0,
      submittedAt: input.response.submittedAt ?? 0,
      arrivedAt,
      responses: input.response.responses ?? [],
      context: { ...input.response.context, submittedBy: input.submittedBy },
    };
    const { participant, responseId } = await applyEvent(
      tx,
      {
        study,
        row,
        event: {
          type: "SUBMIT",
          studyKey: study.key,
          response,
          // derived only if a rule reads it
          get participantIDForConfidentialResponses() {
            return ids.confidentialId;
          },
        },
        response: { stored: response, owner: ids },
        at: arrivedAt,
      },
      eventCtx,
    );
    if (unknownVersion) {
      await recordRuleFailures(tx, [unknownVersion], new Date(ctx.clock()));
      // first among the warnings: it is about the response itself, not about a rule
      eventCtx.failures.unshift(unknownVersion);
    }
    return { participant, responseId, warnings: eventCtx.failures };
  });
}
