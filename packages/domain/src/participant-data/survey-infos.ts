import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import { surveyVersions, type Executor } from "@studyflow/db";

/**
 * What a participant app shows of a survey before opening it: its name, description and typical
 * duration as the survey definition's `props` hold them (CASE's localised texts, every language:
 * the app picks the user's, as it does with case-backend), and the version they come from.
 */
export interface SurveyInfo {
  surveyKey: string;
  versionId: string;
  name: unknown[];
  description: unknown[];
  typicalDuration: unknown[];
}

const texts = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export function surveyInfoOf(surveyKey: string, versionId: string, definition: Record<string, unknown>): SurveyInfo {
  const props = definition["props"];
  const of = (name: string) =>
    typeof props === "object" && props !== null && !Array.isArray(props)
      ? texts((props as Record<string, unknown>)[name])
      : [];
  return {
    surveyKey,
    versionId,
    name: of("name"),
    description: of("description"),
    typicalDuration: of("typicalDuration"),
  };
}

/**
 * The infos of the surveys' current versions (newest not unpublished), one read for all surveys,
 * in the order of the keys; a survey without a published version has none (case-backend skips it).
 */
export async function currentSurveyInfos(
  db: Executor,
  studyKey: string,
  surveyKeys: readonly string[],
): Promise<SurveyInfo[]> {
  const keys = [...new Set(surveyKeys)];
  if (keys.length === 0) return [];
  const rows = await db
    .selectDistinctOn([surveyVersions.surveyKey], {
      surveyKey: surveyVersions.surveyKey,
      versionId: surveyVersions.versionId,
      definition: surveyVersions.definition,
    })
    .from(surveyVersions)
    .where(
      and(
        eq(surveyVersions.studyKey, studyKey),
        inArray(surveyVersions.surveyKey, keys),
        isNull(surveyVersions.unpublishedAt),
      ),
    )
    .orderBy(surveyVersions.surveyKey, desc(surveyVersions.id));
  const byKey = new Map(rows.map((row) => [row.surveyKey, surveyInfoOf(row.surveyKey, row.versionId, row.definition)]));
  return keys.flatMap((key) => {
    const info = byKey.get(key);
    return info ? [info] : [];
  });
}

/**
 * The infos of surveys as submitted: the version each submission names, or, when the survey has no
 * such version (any more), its newest version, published or not. In the order of the requests.
 */
export async function submittedSurveyInfos(
  db: Executor,
  studyKey: string,
  wanted: readonly { surveyKey: string; versionId: string }[],
): Promise<SurveyInfo[]> {
  if (wanted.length === 0) return [];
  const columns = {
    surveyKey: surveyVersions.surveyKey,
    versionId: surveyVersions.versionId,
    definition: surveyVersions.definition,
  };
  const named = await db
    .select(columns)
    .from(surveyVersions)
    .where(
      and(
        eq(surveyVersions.studyKey, studyKey),
        inArray(surveyVersions.surveyKey, [...new Set(wanted.map((w) => w.surveyKey))]),
        inArray(surveyVersions.versionId, [...new Set(wanted.map((w) => w.versionId))]),
      ),
    );
  const exact = (w: { surveyKey: string; versionId: string }) =>
    named.find((row) => row.surveyKey === w.surveyKey && row.versionId === w.versionId);
  const missing = [...new Set(wanted.filter((w) => !exact(w)).map((w) => w.surveyKey))];
  const newest =
    missing.length === 0
      ? []
      : await db
          .selectDistinctOn([surveyVersions.surveyKey], columns)
          .from(surveyVersions)
          .where(and(eq(surveyVersions.studyKey, studyKey), inArray(surveyVersions.surveyKey, missing)))
          .orderBy(surveyVersions.surveyKey, desc(surveyVersions.id));
  return wanted.flatMap((w) => {
    const row = exact(w) ?? newest.find((version) => version.surveyKey === w.surveyKey);
    // the info names the version the submission named, as case-backend's does
    return row ? [{ ...surveyInfoOf(w.surveyKey, row.versionId, row.definition), versionId: w.versionId }] : [];
  });
}
