import { and, asc, eq, sql } from "drizzle-orm";
import { studyCounters, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";

/**
 * Study counters: named whole numbers per study (a scope each) that rules increment
 * (getNextStudyCounterValue, the engine's counter actions) and researchers set, increment and
 * remove. A counter that does not exist counts as 0; incrementing it makes it 1.
 */

export interface StudyCounter {
  scope: string;
  value: number;
}

/** Longest scope: a name a rule or a person gives, not a document. */
export const MAX_COUNTER_SCOPE_LENGTH = 200;

/** A scope as case-backend reads it from the path: trimmed, not blank. */
export function counterScope(raw: string): string {
  const scope = raw.trim();
  if (scope === "") throw new Invalid("scope: must not be blank");
  if (scope.length > MAX_COUNTER_SCOPE_LENGTH) {
    throw new Invalid(`scope: is longer than ${MAX_COUNTER_SCOPE_LENGTH} characters`);
  }
  return scope;
}

const counterOf = (studyKey: string, scope: string) =>
  and(eq(studyCounters.studyKey, studyKey), eq(studyCounters.scope, scope));

const columns = { scope: studyCounters.scope, value: studyCounters.value };

/** The study's counters by scope. */
export async function listStudyCounters(db: Executor, studyKey: string): Promise<StudyCounter[]> {
  await getStudy(db, studyKey);
  return db
    .select(columns)
    .from(studyCounters)
    .where(eq(studyCounters.studyKey, studyKey))
    .orderBy(asc(studyCounters.scope));
}

/** Sets a counter to `value` (creating it), recording `study-counter.set` with the value before. */
export async function saveStudyCounter(
  db: Executor,
  studyKey: string,
  rawScope: string,
  value: number,
  actor: string,
): Promise<StudyCounter> {
  const scope = counterScope(rawScope);
  if (!Number.isSafeInteger(value)) {
    throw new Invalid(`value: must be a whole number of at most ${Number.MAX_SAFE_INTEGER} either way`);
  }
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [before] = await tx.select(columns).from(studyCounters).where(counterOf(studyKey, scope)).for("update");
    const [saved] = await tx
      .insert(studyCounters)
      .values({ studyKey, scope, value })
      .onConflictDoUpdate({ target: [studyCounters.studyKey, studyCounters.scope], set: { value } })
      .returning(columns);
    if (!saved) throw new Error("study counter upsert returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study-counter.set",
      target: scope,
      details: { value, previous: before?.value ?? null },
    });
    return saved;
  });
}

/** Adds 1 to a counter (a missing one becomes 1), recording `study-counter.increment` with the new value. */
export async function incrementStudyCounter(
  db: Executor,
  studyKey: string,
  rawScope: string,
  actor: string,
): Promise<StudyCounter> {
  const scope = counterScope(rawScope);
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [saved] = await tx
      .insert(studyCounters)
      .values({ studyKey, scope, value: 1 })
      .onConflictDoUpdate({
        target: [studyCounters.studyKey, studyCounters.scope],
        set: { value: sql`${studyCounters.value} + 1` },
      })
      .returning(columns);
    if (!saved) throw new Error("study counter increment returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study-counter.increment",
      target: scope,
      details: { value: saved.value },
    });
    return saved;
  });
}

/** Removes a counter, recording `study-counter.remove` with its last value; NotFound if absent. */
export async function removeStudyCounter(db: Executor, studyKey: string, rawScope: string, actor: string) {
  const scope = counterScope(rawScope);
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [removed] = await tx.delete(studyCounters).where(counterOf(studyKey, scope)).returning(columns);
    if (!removed) throw new NotFound(`study counter "${scope}" not found in study "${studyKey}"`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study-counter.remove",
      target: scope,
      details: { value: removed.value },
    });
  });
}
