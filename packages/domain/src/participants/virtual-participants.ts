import { and, eq, sql } from "drizzle-orm";
import { participants, type Executor } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";
import type { ParticipantRow } from "./participant-repository";

/** At most this many matches, as case-backend reads one page of 100. */
const MAX_MATCHES = 100;

/**
 * The study's virtual participants holding a linking code (key and value), so a participant app
 * can check one before claiming it. NotFound for an unknown study.
 */
export async function findVirtualParticipants(
  db: Executor,
  studyKey: string,
  linkingCodeKey: string,
  linkingCodeValue: string,
): Promise<ParticipantRow[]> {
  await getStudy(db, studyKey);
  return db
    .select()
    .from(participants)
    .where(
      and(
        eq(participants.studyKey, studyKey),
        eq(participants.studyStatus, "virtual"),
        sql`${participants.linkingCodes} ->> ${linkingCodeKey} = ${linkingCodeValue}`,
      ),
    )
    .orderBy(participants.id)
    .limit(MAX_MATCHES);
}
