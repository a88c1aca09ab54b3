import { and, asc, eq, inArray } from "drizzle-orm";
import { confidentialResponses, type Executor } from "@studyflow/db";
import { confidentialIdInStudy } from "../participants/participant-ids";
import { getStudy } from "../studies/study-repository";

/** A stored confidential response with the participant id it was asked for. */
export interface ConfidentialResponseRecord {
  id: string;
  participantId: string;
  key: string;
  responses: unknown[];
}

/**
 * The confidential responses of the given participants, in the order the participants were asked
 * for, each participant's oldest first. Confidential responses are stored under the participant's
 * confidential id (derived from the participant id with the study secret, as CASE derives it with
 * its id mapping); the caller names participants by participant id and gets them back so.
 * `key` keeps only one confidential key (CASE's keyFilter); empty keeps all.
 */
export async function findConfidentialResponses(
  db: Executor,
  studyKey: string,
  participantIds: readonly string[],
  key: string,
): Promise<ConfidentialResponseRecord[]> {
  const study = await getStudy(db, studyKey);
  const participantOf = new Map(participantIds.map((id) => [confidentialIdInStudy(study, id), id] as const));
  if (participantOf.size === 0) return [];
  const rows = await db
    .select({
      id: confidentialResponses.id,
      confidentialId: confidentialResponses.confidentialId,
      key: confidentialResponses.key,
      responses: confidentialResponses.responses,
    })
    .from(confidentialResponses)
    .where(
      and(
        eq(confidentialResponses.studyKey, studyKey),
        inArray(confidentialResponses.confidentialId, [...participantOf.keys()]),
        key === "" ? undefined : eq(confidentialResponses.key, key),
      ),
    )
    .orderBy(asc(confidentialResponses.createdAt), asc(confidentialResponses.id));
  const order = new Map(participantIds.map((id, index) => [id, index] as const));
  return rows
    .map((row) => ({
      id: row.id,
      participantId: participantOf.get(row.confidentialId) ?? "",
      key: row.key,
      responses: row.responses,
    }))
    .sort((a, b) => (order.get(a.participantId) ?? 0) - (order.get(b.participantId) ?? 0));
}
