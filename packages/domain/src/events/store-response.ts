import { and, eq } from "drizzle-orm";
import type { SurveyResponse } from "@studyflow/engine";
import { confidentialResponses, surveyResponses, type Executor } from "@studyflow/db";

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
