import { and, asc, eq, gt } from "drizzle-orm";
import { studyParticipantCounts, type Executor } from "@studyflow/db";
import { getStudy } from "../studies/study-repository";

/** How many participants a study has in each status (active, exited, temporary, …). */
export interface ParticipantCounts {
  /** Status → count; statuses without participants are left out. */
  byStatus: Record<string, number>;
  total: number;
}

/**
 * The study's participants by status: one indexed read of the trigger-maintained counts
 * (study_participant_counts), however large the study.
 */
export async function countParticipantsByStatus(db: Executor, studyKey: string): Promise<ParticipantCounts> {
  await getStudy(db, studyKey);
  const rows = await db
    .select({ status: studyParticipantCounts.studyStatus, count: studyParticipantCounts.count })
    .from(studyParticipantCounts)
    .where(and(eq(studyParticipantCounts.studyKey, studyKey), gt(studyParticipantCounts.count, 0)))
    .orderBy(asc(studyParticipantCounts.studyStatus));
  const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  return { byStatus, total: rows.reduce((sum, row) => sum + Number(row.count), 0) };
}
