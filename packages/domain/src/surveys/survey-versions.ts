import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { auditLog, surveyResponses, surveyVersions, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Conflict, Invalid, NotFound } from "../errors";
import type { ClockContext } from "../foundation/clock";
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

/** Audit action of a deleted survey version; its versionId is never given to a later upload. */
const VERSION_DELETE_ACTION = "survey.version.delete";

/**
 * Version ids the survey has had: its stored versions and those deleted (from the audit log), so
 * an upload never gets the id of a deleted version that a participant may still hold.
 */
async function usedVersionIds(tx: Executor, studyKey: string, surveyKey: string): Promise<string[]> {
  const stored = await tx
    .select({ versionId: surveyVersions.versionId })
    .from(surveyVersions)
    .where(ofSurvey(studyKey, surveyKey));
  const deleted = await tx
    .select({ versionId: sql<string | null>`${auditLog.details} ->> 'versionId'` })
    .from(auditLog)
    .where(
      and(eq(auditLog.studyKey, studyKey), eq(auditLog.action, VERSION_DELETE_ACTION), eq(auditLog.target, surveyKey)),
    );
  return [...stored, ...deleted].flatMap((row) => (row.versionId === null ? [] : [row.versionId]));
}

/**
 * Stores an uploaded CASE Survey as the next version of its survey and publishes it: it becomes
 * the current version (also after the survey was unpublished). The server assigns the version id
 * and the publication time; the change is audited (`survey.publish`) in the same transaction.
 *
 * `newSurvey`: the upload creates the survey, so a survey that already has a version is a
 * Conflict. `surveyKey`: the survey the caller names (a path's key), which the definition's key
 * must equal (Invalid otherwise).
 */
export async function publishSurveyVersion(
  db: Database,
  input: SurveyChange & { survey: unknown; newSurvey?: boolean; surveyKey?: string },
  ctx: ClockContext,
): Promise<SurveyVersion> {
  const upload = readSurveyDefinition(input.survey);
  if (input.surveyKey !== undefined && upload.surveyKey !== input.surveyKey) {
    throw new Invalid(
      `surveyDefinition.key: "${upload.surveyKey}" does not match the survey key "${input.surveyKey}" in the path`,
    );
  }
  await getStudy(db, input.studyKey);
  const at = new Date(ctx.clock());
  return db.transaction(async (tx) => {
    await lockSurvey(tx, input.studyKey, upload.surveyKey);
    if (input.newSurvey === true && (await surveyHasVersions(tx, input.studyKey, upload.surveyKey))) {
      throw new Conflict(
        `survey key already exists: "${upload.surveyKey}" in study "${input.studyKey}"; ` +
          `upload a new version with POST …/surveys/${upload.surveyKey}`,
      );
    }
    const versionId = nextVersionId(await usedVersionIds(tx, input.studyKey, upload.surveyKey), at);
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
      .returning();
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

/** Whether the study holds a version of the survey (published or not). */
export async function surveyHasVersions(db: Executor, studyKey: string, surveyKey: string): Promise<boolean> {
  const [row] = await db
    .select({ id: surveyVersions.id })
    .from(surveyVersions)
    .where(ofSurvey(studyKey, surveyKey))
    .limit(1);
  return row !== undefined;
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

/**
 * Every version of a survey, newest first, as case-backend lists them: each definition without
 * the survey's content and rules (`surveyDefinition.items`, `prefillRules`, `contextRules`), cut
 * in the database so a long history of large surveys is not read whole.
 */
export async function listSurveyVersionDocuments(
  db: Executor,
  studyKey: string,
  surveyKey: string,
): Promise<SurveyVersion[]> {
  await getStudy(db, studyKey);
  const rows = await db
    .select({
      ...info,
      id: surveyVersions.id,
      definition: sql<
        Record<string, unknown>
      >`(${surveyVersions.definition} - 'prefillRules' - 'contextRules') #- '{surveyDefinition,items}'`,
    })
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

/**
 * The current version (case-admin's "latest survey"): NotFound for an unknown study, or a survey
 * with no version left published.
 */
export async function getCurrentSurveyVersion(
  db: Executor,
  studyKey: string,
  surveyKey: string,
): Promise<SurveyVersion> {
  await getStudy(db, studyKey);
  const current = await currentSurveyVersion(db, studyKey, surveyKey);
  if (!current) throw new NotFound(`survey "${surveyKey}" has no published version in study "${studyKey}"`);
  return current;
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
 * `idempotent`: a survey already unpublished is no error (nothing changes, nothing is audited;
 * the answer has its earlier unpublication time and 0 versions), as CASE answers it.
 *
 * @throws NotFound for a survey without versions; Conflict when it is already unpublished (unless idempotent).
 */
export async function unpublishSurvey(
  db: Database,
  input: SurveyChange & { surveyKey: string; idempotent?: boolean },
  ctx: ClockContext,
): Promise<UnpublishedSurvey> {
  await getStudy(db, input.studyKey);
  const at = new Date(ctx.clock());
  return db.transaction(async (tx) => {
    await lockSurvey(tx, input.studyKey, input.surveyKey);
    const [known] = await tx
      .select({ id: surveyVersions.id, unpublishedAt: surveyVersions.unpublishedAt })
      .from(surveyVersions)
      .where(ofSurvey(input.studyKey, input.surveyKey))
      .orderBy(desc(surveyVersions.id))
      .limit(1);
    if (!known) throw new NotFound(`survey "${input.surveyKey}" not found in study "${input.studyKey}"`);
    const stamped = await tx
      .update(surveyVersions)
      .set({ unpublishedAt: at })
      .where(and(ofSurvey(input.studyKey, input.surveyKey), isNull(surveyVersions.unpublishedAt)))
      .returning({ id: surveyVersions.id, versionId: surveyVersions.versionId });
    if (stamped.length === 0) {
      if (input.idempotent === true) {
        return { surveyKey: input.surveyKey, unpublishedAt: known.unpublishedAt ?? at, versionsUnpublished: 0 };
      }
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

/** A deleted survey version. */
export interface DeletedSurveyVersion {
  surveyKey: string;
  versionId: string;
  /** The survey's current version afterwards; null when it has none (unpublished or no versions left). */
  currentVersionId: string | null;
}

/**
 * Deletes one version of a survey. A version that stored responses name stays (409): exports and
 * the data explorer read a response's questions from the version it names. Deleting the current
 * version makes the newest remaining published one current. The version id is not given to a
 * later upload (see usedVersionIds). Audited as `survey.version.delete` in the same transaction.
 *
 * @throws NotFound for an unknown study, survey or version; Conflict when responses name the version.
 */
export async function deleteSurveyVersion(
  db: Database,
  input: SurveyChange & { surveyKey: string; versionId: string },
  ctx: ClockContext,
): Promise<DeletedSurveyVersion> {
  await getStudy(db, input.studyKey);
  const at = new Date(ctx.clock());
  return db.transaction(async (tx) => {
    await lockSurvey(tx, input.studyKey, input.surveyKey);
    const [version] = await tx
      .select({ id: surveyVersions.id, unpublishedAt: surveyVersions.unpublishedAt })
      .from(surveyVersions)
      .where(and(ofSurvey(input.studyKey, input.surveyKey), eq(surveyVersions.versionId, input.versionId)))
      .limit(1);
    if (!version) {
      throw new NotFound(
        `survey "${input.surveyKey}" has no version "${input.versionId}" in study "${input.studyKey}"`,
      );
    }
    const [named] = await tx
      .select({ count: sql<number>`count(*)::int` })
      .from(surveyResponses)
      .where(
        and(
          eq(surveyResponses.studyKey, input.studyKey),
          eq(surveyResponses.key, input.surveyKey),
          eq(surveyResponses.versionId, input.versionId),
        ),
      );
    const responses = named?.count ?? 0;
    if (responses > 0) {
      throw new Conflict(
        `survey version "${input.versionId}" of "${input.surveyKey}" is named by ${responses} ` +
          `response${responses === 1 ? "" : "s"}; exports need its definition, so it is kept`,
      );
    }
    await tx.delete(surveyVersions).where(eq(surveyVersions.id, version.id));
    await recordAudit(
      tx,
      {
        studyKey: input.studyKey,
        actor: input.actor,
        action: VERSION_DELETE_ACTION,
        target: input.surveyKey,
        details: { versionId: input.versionId, wasPublished: version.unpublishedAt === null },
      },
      at,
    );
    const [current] = await tx
      .select({ versionId: surveyVersions.versionId })
      .from(surveyVersions)
      .where(and(ofSurvey(input.studyKey, input.surveyKey), isNull(surveyVersions.unpublishedAt)))
      .orderBy(desc(surveyVersions.id))
      .limit(1);
    return { surveyKey: input.surveyKey, versionId: input.versionId, currentVersionId: current?.versionId ?? null };
  });
}
