import { eq } from "drizzle-orm";
import { studies, type Executor } from "@studyflow/db";
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
