import { randomUUID } from "node:crypto";
import type { SurveyItemResponse } from "@studyflow/engine";
import type { Database } from "@studyflow/db";
import { Conflict } from "../errors";
import { confidentialIdOf } from "../participants/participant-ids";
import { lockParticipantOrThrow, type ParticipantRow } from "../participants/participant-repository";
import { getActiveStudy } from "../studies/study-repository";
import { applyEvent } from "./apply-event";
import { inEventTransaction, nowSeconds, type DomainContext } from "./event-runner";
import type { RuleFailureRecord } from "./rule-failures";
import type { ArrivedResponse } from "./store-response";

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

export interface SubmitResponseResult {
  participant: ParticipantRow;
  responseId: string | null;
  /** Rules that failed for this submission; the response was stored all the same. */
  warnings: RuleFailureRecord[];
}

/** Statuses that no longer take responses: deleted accounts, and anonymous pre-registrations. */
const CLOSED_STATUSES = new Set(["accountDeleted", "temporary"]);

/**
 * Submits a response on behalf of a participant: the SUBMIT rules, the new state, the response,
 * its confidential items, reports and messages commit together or not at all.
 */
export async function submitResponse(
  db: Database,
  input: SubmitResponseInput,
  ctx: DomainContext,
): Promise<SubmitResponseResult> {
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getActiveStudy(tx, input.studyKey);
    const row = await lockParticipantOrThrow(tx, input.studyKey, input.participantId);
    if (CLOSED_STATUSES.has(row.studyStatus)) {
      throw new Conflict(`participant "${input.participantId}" has status "${row.studyStatus}" and takes no responses`);
    }
    const arrivedAt = nowSeconds(ctx);
    const confidentialId = confidentialIdOf(study.secret, row.participantId);
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
        event: { type: "SUBMIT", studyKey: study.key, response, participantIDForConfidentialResponses: confidentialId },
        response: { stored: response, confidentialId },
        at: arrivedAt,
      },
      eventCtx,
    );
    return { participant, responseId, warnings: eventCtx.failures };
  });
}
