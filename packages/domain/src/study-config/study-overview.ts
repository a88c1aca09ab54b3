import { and, asc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { permissions, studies, studyRules, type Executor } from "@studyflow/db";
import { grantedStudyKeys, studyResource, type ManagementSubject } from "../access/permissions";
import { Forbidden, NotFound } from "../errors";

const { secret: _secret, ...publicColumns } = getTableColumns(studies);

/** A study as management sees it: everything but the secret, which never leaves the server. */
export interface StudyOverview {
  study: Omit<typeof studies.$inferSelect, "secret">;
  /** The highest stored rules version; null while the study has none. */
  currentRulesVersion: number | null;
}

const currentRulesVersion = sql<
  number | null
>`(select max(${studyRules.version}) from ${studyRules} where ${studyRules.studyKey} = ${studies.key})`;

function toOverview(row: StudyOverview["study"] & { currentRulesVersion: number | null }): StudyOverview {
  const { currentRulesVersion: version, ...study } = row;
  return { study, currentRulesVersion: version === null ? null : Number(version) };
}

/** The studies the subject may see: all for an admin or a "*" grant, else those it holds a permission for. */
export async function listVisibleStudies(db: Executor, who: ManagementSubject): Promise<StudyOverview[]> {
  const granted = who.isAdmin ? ["*"] : await grantedStudyKeys(db, who);
  if (granted.length === 0) return [];
  const rows = await db
    .select({ ...publicColumns, currentRulesVersion })
    .from(studies)
    .where(granted.includes("*") ? undefined : inArray(studies.key, granted))
    .orderBy(asc(studies.key));
  return rows.map(toOverview);
}

export async function getStudyOverview(db: Executor, studyKey: string): Promise<StudyOverview> {
  const [row] = await db
    .select({ ...publicColumns, currentRulesVersion })
    .from(studies)
    .where(eq(studies.key, studyKey))
    .limit(1);
  if (!row) throw new NotFound(`study "${studyKey}" not found`);
  return toOverview(row);
}

/**
 * Reading a study's overview needs no particular right: any permission for the study (or for
 * every study) shows it, as the study list does. Checked before the study is looked up, so a
 * subject without rights cannot tell an existing study from an unknown one.
 */
export async function assertStudyVisible(db: Executor, who: ManagementSubject, studyKey: string): Promise<void> {
  if (who.isAdmin) return;
  const [grant] = await db
    .select({ id: permissions.id })
    .from(permissions)
    .where(
      and(
        eq(permissions.subjectId, who.subject),
        eq(permissions.subjectType, who.subjectType ?? "management-user"),
        eq(permissions.resourceType, "study"),
        inArray(permissions.studyKey, [...studyResource(studyKey).resourceKeys]),
      ),
    )
    .limit(1);
  if (!grant) throw new Forbidden(`no permission for study "${studyKey}"`);
}
