import { eq } from "drizzle-orm";
import { studies, type Executor } from "@studyflow/db";
import type { ReadCache } from "../cache/read-cache";
import { Conflict, NotFound } from "../errors";

export type StudyRow = typeof studies.$inferSelect;

export async function getStudy(db: Executor, studyKey: string): Promise<StudyRow> {
  const [study] = await db.select().from(studies).where(eq(studies.key, studyKey)).limit(1);
  if (!study) throw new NotFound(`study "${studyKey}" not found`);
  return study;
}

/** Participant events need an active study; the share lock keeps it active until the event commits. */
export async function getActiveStudy(tx: Executor, studyKey: string): Promise<StudyRow> {
  const [study] = await tx.select().from(studies).where(eq(studies.key, studyKey)).for("share").limit(1);
  if (!study) throw new NotFound(`study "${studyKey}" not found`);
  if (study.status !== "active") throw new Conflict(`study "${studyKey}" is not active`);
  return study;
}

/**
 * The study of a participant event, read before its participant is locked (the participant id
 * derives from the study's secret): from the read cache when the process has one. Its status is
 * not taken from here: lockEventParticipant checks it under the lock.
 */
export async function studyForEvent(tx: Executor, studyKey: string, cache: ReadCache | undefined): Promise<StudyRow> {
  const load = async () => {
    const [study] = await tx.select().from(studies).where(eq(studies.key, studyKey)).limit(1);
    return study;
  };
  const study = cache ? await cache.get("study", studyKey, load) : await load();
  if (!study) throw new NotFound(`study "${studyKey}" not found`);
  return study;
}
