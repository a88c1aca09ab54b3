import { randomUUID } from "node:crypto";
import type { AssignedSurvey, SurveyItemResponse, SurveyResponse } from "@studyflow/engine";
import { confidentialResponses, surveyResponses, type Database, type Executor } from "@studyflow/db";
import { and, eq } from "drizzle-orm";
import { Conflict } from "../errors";
import { confidentialIdOf } from "../participants/participant-ids";
import {
  lockParticipantOrThrow,
  saveParticipantState,
  toApiParticipant,
  toEngineState,
  type ApiParticipant,
} from "../participants/participant-repository";
import { persistEffects, persistReports } from "../rules/event-outcome";
import { getActiveStudy } from "../studies/study-repository";
import { nowSeconds, runEventRules, type DomainContext } from "./event-runner";

export interface SubmittedResponse {
  key: string;
  versionId?: string;
  openedAt?: number;
  submittedAt?: number;
  responses?: SurveyItemResponse[];
  context?: Record<string, string>;
}

export interface SubmitResponseInput {
  studyKey: string;
  participantId: string;
  response: SubmittedResponse;
  /** Subject of the caller, recorded as context.submittedBy. */
  submittedBy: string;
}

/** An assigned survey as clients see it: studyKey and profileID always present. */
export type ClientAssignedSurvey = AssignedSurvey & { studyKey: string; profileID: string };

export interface SubmitResponseResult {
  result: ClientAssignedSurvey[];
  participant: ApiParticipant;
  responseId: string | null;
}

/** Statuses that no longer take responses: deleted accounts, and anonymous pre-registrations. */
const CLOSED_STATUSES = new Set(["accountDeleted", "temporary"]);

export function withStudyKey(surveys: readonly AssignedSurvey[], studyKey: string): ClientAssignedSurvey[] {
  return surveys.map((survey) => ({ ...survey, studyKey, profileID: survey.profileID ?? "" }));
}

/**
 * Submits a response on behalf of a participant: the SUBMIT rules, the new state, the response,
 * its confidential items, reports and messages commit together or not at all.
 */
export async function submitResponse(
  db: Database,
  input: SubmitResponseInput,
  ctx: DomainContext,
): Promise<SubmitResponseResult> {
  return db.transaction(async (tx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const row = await lockParticipantOrThrow(tx, input.studyKey, input.participantId);
    if (CLOSED_STATUSES.has(row.studyStatus)) {
      throw new Conflict(`participant "${input.participantId}" has status "${row.studyStatus}" and takes no responses`);
    }
    const arrivedAt = nowSeconds(ctx);
    const responseId = randomUUID();
    const confidentialId = confidentialIdOf(study.secret, row.participantId);
    const response: SurveyResponse & { id: string; arrivedAt: number } = {
      id: responseId,
      key: input.response.key,
      participantId: row.participantId,
      versionId: input.response.versionId ?? "",
      openedAt: input.response.openedAt ?? 0,
      submittedAt: input.response.submittedAt ?? 0,
      arrivedAt,
      responses: input.response.responses ?? [],
      context: { ...input.response.context, submittedBy: input.submittedBy },
    };

    const outcome = await runEventRules(
      tx,
      toEngineState(row),
      { type: "SUBMIT", studyKey: study.key, response, participantIDForConfidentialResponses: confidentialId },
      ctx,
    );
    await persistEffects(tx, study.key, outcome.effects);
    const saved = await saveParticipantState(tx, row, outcome.state, arrivedAt);
    const storedId = await storeResponse(tx, study.key, response, confidentialId, saved.currentStudySession);
    await persistReports(tx, {
      studyKey: study.key,
      eventType: "SUBMIT",
      responseId: storedId,
      reports: outcome.reports,
    });
    return {
      result: withStudyKey(saved.assignedSurveys, study.key),
      participant: toApiParticipant(saved),
      responseId: storedId,
    };
  });
}

/**
 * Splits confidential items off into their own records (owned by the confidential id, without
 * meta), stores the rest as the response, and returns the stored response's id (null when every
 * item was confidential).
 */
async function storeResponse(
  tx: Executor,
  studyKey: string,
  response: SurveyResponse & { id: string; arrivedAt: number },
  confidentialId: string,
  session: string,
): Promise<string | null> {
  const items = response.responses ?? [];
  const confidential = items.filter((item) => (item.confidentialMode ?? "") !== "");
  const open = items.filter((item) => (item.confidentialMode ?? "") === "");

  for (const item of confidential) {
    const key = item.mapToKey || item.key;
    const { meta: _meta, ...withoutMeta } = item;
    if (item.confidentialMode !== "add") {
      await tx
        .delete(confidentialResponses)
        .where(
          and(
            eq(confidentialResponses.studyKey, studyKey),
            eq(confidentialResponses.confidentialId, confidentialId),
            eq(confidentialResponses.key, key),
          ),
        );
    }
    await tx.insert(confidentialResponses).values({ studyKey, confidentialId, key, responses: [withoutMeta] });
  }

  if (open.length === 0 && confidential.length > 0) return null;
  await tx.insert(surveyResponses).values({
    id: response.id,
    studyKey,
    participantId: response.participantId ?? "",
    key: response.key,
    versionId: response.versionId ?? "",
    openedAt: Math.trunc(response.openedAt ?? 0),
    submittedAt: Math.trunc(response.submittedAt ?? 0),
    arrivedAt: response.arrivedAt,
    responses: open,
    context: { ...response.context, session },
  });
  return response.id;
}
