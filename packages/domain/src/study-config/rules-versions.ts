import { and, desc, eq, sql } from "drizzle-orm";
import { studyRules, type Executor } from "@studyflow/db";
import { NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";

/** A stored rules version without its rules. New versions are stored by setStudyRules (admin/study-setup). */
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
