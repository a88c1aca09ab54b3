import { and, eq } from "drizzle-orm";
import type { SurveyResponse } from "@studyflow/engine";
import { confidentialResponses, rawClientOf, type Executor } from "@studyflow/db";
import type { ParticipantIds } from "../participants/participant-ids";

/** A submitted response as the pipeline stores it: its id and arrival time are fixed by the server. */
export type ArrivedResponse = SurveyResponse & { id: string; arrivedAt: number };

/**
 * Splits confidential items off into their own records (owned by the confidential id, without
 * meta), stores the rest as the response, and returns the stored response's id (null when every
 * item was confidential).
 */
export async function storeResponse(
  tx: Executor,
  studyKey: string,
  response: ArrivedResponse,
  owner: Pick<ParticipantIds, "confidentialId">,
  session: string,
): Promise<string | null> {
  const items = response.responses ?? [];
  const confidential = items.filter(isConfidential);
  const open = items.filter((item) => !isConfidential(item));

  for (const item of confidential) {
    const { confidentialId } = owner;
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
  await responseInsert(tx, studyKey, response, open, session);
  return response.id;
}

const isConfidential = (item: { confidentialMode?: string }) => (item.confidentialMode ?? "") !== "";

/** Whether a response has confidential items, which storeResponse writes before the response itself. */
export const hasConfidentialItems = (response: ArrivedResponse) => (response.responses ?? []).some(isConfidential);

/**
 * storeResponse of a response without confidential items, handed to the connection at once: for the
 * last statements of an event, which go to the server with its COMMIT (EventContext.sendWithCommit).
 * The response's id is its stored id.
 */
export function sendResponse(
  tx: Executor,
  studyKey: string,
  response: ArrivedResponse,
  session: string,
): Promise<void> {
  return responseInsert(tx, studyKey, response, response.responses ?? [], session)
    .execute()
    .then(() => undefined);
}

/** The response's insert, a prepared statement of postgres.js (see rawClientOf): every submit runs it. */
function responseInsert(
  tx: Executor,
  studyKey: string,
  response: ArrivedResponse,
  items: readonly unknown[],
  session: string,
) {
  return rawClientOf(tx)`
    insert into survey_responses
      (id, study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context)
    values (${response.id}, ${studyKey}, ${response.participantId ?? ""}, ${response.key}, ${response.versionId ?? ""},
      ${Math.trunc(response.openedAt ?? 0)}, ${Math.trunc(response.submittedAt ?? 0)}, ${response.arrivedAt},
      ${JSON.stringify(items)}::text::jsonb, ${JSON.stringify({ ...response.context, session })}::text::jsonb)`;
}
