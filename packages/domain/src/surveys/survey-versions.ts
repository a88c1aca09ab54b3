import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { surveyVersions, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../admin/audit";
import { Conflict, NotFound } from "../errors";
import type { DomainContext } from "../events/event-runner";
import { getStudy } from "../studies/study-repository";
import { readSurveyDefinition } from "./survey-definition";
import { nextVersionId } from "./survey-version-id";

/** One uploaded version of a survey, with its definition. */
export type SurveyVersion = typeof surveyVersions.$inferSelect;

/** A version without its definition, for listings. */
export type SurveyVersionInfo = Omit<SurveyVersion, "id" | "definition">;

/** A survey of a study, as the listing shows it. */
export interface SurveySummary {
  surveyKey: string;
  /** The version participants get; null when the survey is unpublished. */
  currentVersionId: string | null;
  /** When the current version was published; null when there is none. */
  publishedAt: Date | null;
  versionCount: number;
  /** When the survey was unpublished; null while it has a current version. */
  unpublishedAt: Date | null;
}

/** Who makes a change and when: the audit actor and the domain clock. */
export interface SurveyChange {
  studyKey: string;
  /** Management subject, or the CLI's operator name. */
  actor: string;
}

const info = {
  studyKey: surveyVersions.studyKey,
  surveyKey: surveyVersions.surveyKey,
  versionId: surveyVersions.versionId,
  publishedAt: surveyVersions.publishedAt,
  publishedBy: surveyVersions.publishedBy,
  unpublishedAt: surveyVersions.unpublishedAt,
};

const ofSurvey = (studyKey: string, surveyKey: string) =>
  and(eq(surveyVersions.studyKey, studyKey), eq(surveyVersions.surveyKey, surveyKey));

/** Serialises uploads and unpublishing of one survey, so each upload gets its own version id. */
async function lockSurvey(tx: Executor, studyKey: string, surveyKey: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`survey-versions:${studyKey}\u0001${surveyKey}`}))`);
}

/**
 * Stores an uploaded CASE Survey as the next version of its survey and publishes it: it becomes
 * the current version (also after the survey was unpublished). The server assigns the version id
 * and the publication time; the change is audited (`survey.publish`) in the same transaction.
 */
export async function publishSurveyVersion(
  db: Database,
  input: SurveyChange & { survey: unknown },
  ctx: Pick<DomainContext, "clock">,
): Promise<SurveyVersionInfo> {
  const upload = readSurveyDefinition(input.survey);
  await getStudy(db, input.studyKey);
  const at = new Date(ctx.clock());
  return db.transaction(async (tx) => {
    await lockSurvey(tx, input.studyKey, upload.surveyKey);
    const existing = await tx
      .select({ versionId: surveyVersions.versionId })
      .from(surveyVersions)
      .where(ofSurvey(input.studyKey, upload.surveyKey));
    const versionId = nextVersionId(
      existing.map((row) => row.versionId),
      at,
    );
    const [stored] = await tx
      .insert(surveyVersions)
      .values({
        studyKey: input.studyKey,
        surveyKey: upload.surveyKey,
        versionId,
        definition: upload.definition,
        publishedAt: at,
        publishedBy: input.actor,
      })
      .returning(info);
    if (!stored) throw new Error("survey version insert returned nothing");
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: "survey.publish",
        target: upload.surveyKey,
        details: { versionId, bytes: upload.bytes },
      },
      at,
    );
    return stored;
  });
}

/** The study's surveys by key, with their current version. */
export async function listSurveys(db: Executor, studyKey: string): Promise<SurveySummary[]> {
  await getStudy(db, studyKey);
  const rows = await db
    .select(info)
    .from(surveyVersions)
    .where(eq(surveyVersions.studyKey, studyKey))
    .orderBy(asc(surveyVersions.surveyKey), desc(surveyVersions.id));
  const summaries = new Map<string, SurveySummary>();
  for (const row of rows) {
    let summary = summaries.get(row.surveyKey);
    if (!summary) {
      // rows of a survey come newest first: the first is the current version unless unpublished
      summary = {
        surveyKey: row.surveyKey,
        currentVersionId: row.unpublishedAt === null ? row.versionId : null,
        publishedAt: row.unpublishedAt === null ? row.publishedAt : null,
        versionCount: 0,
        unpublishedAt: row.unpublishedAt,
      };
      summaries.set(row.surveyKey, summary);
    }
    summary.versionCount += 1;
  }
  return [...summaries.values()];
}

/** Every version of a survey, newest first, without definitions. */
export async function listSurveyVersions(
  db: Executor,
  studyKey: string,
  surveyKey: string,
): Promise<SurveyVersionInfo[]> {
  await getStudy(db, studyKey);
  const rows = await db
    .select(info)
    .from(surveyVersions)
    .where(ofSurvey(studyKey, surveyKey))
    .orderBy(desc(surveyVersions.id));
  if (rows.length === 0) throw new NotFound(`survey "${surveyKey}" not found in study "${studyKey}"`);
  return rows;
}

/** One version with its definition. */
export async function getSurveyVersion(
  db: Executor,
  studyKey: string,
  surveyKey: string,
  versionId: string,
): Promise<SurveyVersion> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select()
    .from(surveyVersions)
    .where(and(ofSurvey(studyKey, surveyKey), eq(surveyVersions.versionId, versionId)))
    .limit(1);
  if (!row) throw new NotFound(`survey "${surveyKey}" has no version "${versionId}" in study "${studyKey}"`);
  return row;
}

/** The version participants get: the newest one not unpublished; undefined when there is none. */
export async function currentSurveyVersion(
  db: Executor,
  studyKey: string,
  surveyKey: string,
): Promise<SurveyVersion | undefined> {
  const [row] = await db
    .select()
    .from(surveyVersions)
    .where(and(ofSurvey(studyKey, surveyKey), isNull(surveyVersions.unpublishedAt)))
    .orderBy(desc(surveyVersions.id))
    .limit(1);
  return row;
}

/** What the study holds of a survey a response names: nothing, or whether the named version is one of its versions. */
export type SurveyVersionStanding = "survey-unknown" | "version-known" | "version-unknown";

/** Whether a versionId names an uploaded version (published or not) of the survey in this study. */
export async function surveyVersionStanding(
  db: Executor,
  studyKey: string,
  surveyKey: string,
  versionId: string,
): Promise<SurveyVersionStanding> {
  const rows = await db
    .select({ matches: sql<boolean>`bool_or(${surveyVersions.versionId} = ${versionId})` })
    .from(surveyVersions)
    .where(ofSurvey(studyKey, surveyKey));
  const matches = rows[0]?.matches;
  if (matches === null || matches === undefined) return "survey-unknown";
  return matches ? "version-known" : "version-unknown";
}

export interface UnpublishedSurvey {
  surveyKey: string;
  unpublishedAt: Date;
  /** Versions that were still published and are now stamped. */
  versionsUnpublished: number;
}

/**
 * Unpublishes a survey: every version still published is stamped with the time, so the survey
 * has no current version and participants can no longer fetch it. The versions stay (responses
 * name them, and researchers can still read them); a later upload publishes the survey again.
 * Audited as `survey.unpublish`.
 *
 * @throws NotFound for a survey without versions; Conflict when it is already unpublished.
 */
export async function unpublishSurvey(
  db: Database,
  input: SurveyChange & { surveyKey: string },
  ctx: Pick<DomainContext, "clock">,
): Promise<UnpublishedSurvey> {
  await getStudy(db, input.studyKey);
  const at = new Date(ctx.clock());
  return db.transaction(async (tx) => {
    await lockSurvey(tx, input.studyKey, input.surveyKey);
    const [known] = await tx
      .select({ id: surveyVersions.id })
      .from(surveyVersions)
      .where(ofSurvey(input.studyKey, input.surveyKey))
      .limit(1);
    if (!known) throw new NotFound(`survey "${input.surveyKey}" not found in study "${input.studyKey}"`);
    const stamped = await tx
      .update(surveyVersions)
      .set({ unpublishedAt: at })
      .where(and(ofSurvey(input.studyKey, input.surveyKey), isNull(surveyVersions.unpublishedAt)))
      .returning({ id: surveyVersions.id, versionId: surveyVersions.versionId });
    if (stamped.length === 0) {
      throw new Conflict(`survey "${input.surveyKey}" is already unpublished; upload a version to publish it again`);
    }
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: "survey.unpublish",
        target: input.surveyKey,
        // in upload order (UPDATE … RETURNING has none of its own)
        details: { versionIds: stamped.sort((a, b) => a.id - b.id).map((row) => row.versionId) },
      },
      at,
    );
    return { surveyKey: input.surveyKey, unpublishedAt: at, versionsUnpublished: stamped.length };
  });
}
