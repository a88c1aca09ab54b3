import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { studyRules, tasks, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Conflict, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";

/** A stored rules version without its rules. New versions are stored by setStudyRules (study-setup/). */
export interface RulesVersionSummary {
  version: number;
  uploadedBy: string;
  uploadedAt: Date;
  ruleCount: number;
}

export interface RulesVersion extends Omit<RulesVersionSummary, "ruleCount"> {
  rules: unknown[];
}

/** Every rules version of the study, newest first; the first is the current one. */
export async function listRulesVersions(db: Executor, studyKey: string): Promise<RulesVersionSummary[]> {
  await getStudy(db, studyKey);
  return db
    .select({
      version: studyRules.version,
      uploadedBy: studyRules.uploadedBy,
      uploadedAt: studyRules.uploadedAt,
      ruleCount: sql<number>`jsonb_array_length(${studyRules.rules})::int`,
    })
    .from(studyRules)
    .where(eq(studyRules.studyKey, studyKey))
    .orderBy(desc(studyRules.version));
}

/** One rules version with its rules; "current" is the highest. NotFound names what is missing. */
export async function getRulesVersion(
  db: Executor,
  studyKey: string,
  version: number | "current",
): Promise<RulesVersion> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select({
      version: studyRules.version,
      uploadedBy: studyRules.uploadedBy,
      uploadedAt: studyRules.uploadedAt,
      rules: studyRules.rules,
    })
    .from(studyRules)
    .where(and(eq(studyRules.studyKey, studyKey), version === "current" ? undefined : eq(studyRules.version, version)))
    .orderBy(desc(studyRules.version))
    .limit(1);
  if (!row) {
    throw new NotFound(
      version === "current"
        ? `study "${studyKey}" has no rules yet`
        : `rules version ${version} not found for study "${studyKey}"`,
    );
  }
  return row;
}

/** A deleted rules version, and the study's current version afterwards (null: no rules left). */
export interface DeletedRulesVersion {
  version: number;
  currentVersion: number | null;
}

/**
 * Deletes one rules version. Deleting the highest makes the one before it current (the next
 * participant event runs it), as in CASE. A version that a queued or running timer task runs stays
 * (409): a tick reads its rules version at every chunk. Audited as `rules.delete` in the same
 * transaction, serialised with uploads (setStudyRules takes the same lock).
 *
 * @throws NotFound for an unknown study or version; Conflict while a timer task runs the version.
 */
export async function deleteRulesVersion(
  db: Database,
  input: { studyKey: string; version: number; actor: string },
): Promise<DeletedRulesVersion> {
  const deleted = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`study-rules:${input.studyKey}`}))`);
    await getStudy(tx, input.studyKey);
    const [row] = await tx
      .select({ version: studyRules.version, ruleCount: sql<number>`jsonb_array_length(${studyRules.rules})::int` })
      .from(studyRules)
      .where(and(eq(studyRules.studyKey, input.studyKey), eq(studyRules.version, input.version)))
      .limit(1);
    if (!row) throw new NotFound(`rules version ${input.version} not found for study "${input.studyKey}"`);
    const [running] = await tx
      .select({ id: tasks.id })
      .from(tasks)
      .where(
        and(
          eq(tasks.studyKey, input.studyKey),
          eq(tasks.kind, "timer"),
          inArray(tasks.status, ["queued", "in_progress"]),
          sql`(${tasks.input} ->> 'rulesVersion')::int = ${input.version}`,
        ),
      )
      .limit(1);
    if (running) {
      throw new Conflict(
        `rules version ${input.version} is run by timer task ${running.id}, which is not finished; ` +
          "delete it once the task has ended",
      );
    }
    await tx
      .delete(studyRules)
      .where(and(eq(studyRules.studyKey, input.studyKey), eq(studyRules.version, input.version)));
    const [current] = await tx
      .select({ version: studyRules.version })
      .from(studyRules)
      .where(eq(studyRules.studyKey, input.studyKey))
      .orderBy(desc(studyRules.version))
      .limit(1);
    const currentVersion = current?.version ?? null;
    await recordAudit(tx, {
      studyKey: input.studyKey,
      actor: input.actor,
      action: "rules.delete",
      target: String(input.version),
      details: { version: input.version, ruleCount: row.ruleCount, currentVersion },
    });
    return { version: input.version, currentVersion };
  });
  forgetCached(db, "rules", input.studyKey);
  return deleted;
}
