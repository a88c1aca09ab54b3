import { and, eq } from "drizzle-orm";
import { participants, type Executor } from "@studyflow/db";
import { NotFound } from "../errors";
import type { ParticipantRow } from "../participants/participant-repository";
import { getStudy } from "../studies/study-repository";
import { readExplorerPage, type ExplorerPage, type ExplorerQuery } from "./explorer-page";
import type { ExplorerPageCache } from "./page-cache";
import { inKeys, inPageOrder } from "./paged-read";

/** A page of the study's participants (every status, as case-backend lists them), by participant id unless sorted. */
export async function listExplorerParticipants(
  db: Executor,
  studyKey: string,
  query: ExplorerQuery,
  cache?: ExplorerPageCache,
): Promise<ExplorerPage<ParticipantRow>> {
  await getStudy(db, studyKey);
  return readExplorerPage(db, "participants", studyKey, query, cache, async (keys, executor, within) =>
    inPageOrder(
      keys,
      await executor
        .select()
        .from(participants)
        .where(and(eq(participants.studyKey, studyKey), within ?? inKeys(participants.participantId, keys))),
      (row) => row.participantId,
    ),
  );
}

export async function getExplorerParticipant(
  db: Executor,
  studyKey: string,
  participantId: string,
): Promise<ParticipantRow> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .limit(1);
  if (!row) throw new NotFound(`participant "${participantId}" not found in study "${studyKey}"`);
  return row;
}
