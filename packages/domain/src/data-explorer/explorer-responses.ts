import { and, eq, sql } from "drizzle-orm";
import { participants, surveyResponses, surveyVersions, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { translateCaseFilter } from "../case-filter/translate-filter";
import { Invalid, NotFound } from "../errors";
import { getStudy, type StudyRow } from "../studies/study-repository";
import { isRowId } from "./explorer-ids";
import { readExplorerPage, type ExplorerPage, type ExplorerQuery } from "./explorer-page";
import type { ExplorerPageCache } from "./page-cache";
import { inKeys, inPageOrder } from "./paged-read";

export type ResponseRow = typeof surveyResponses.$inferSelect;

/** A response with what flat CASE rows need of its participant when the study tracks accounts. */
export interface ExplorerResponse extends ResponseRow {
  account: { accountId: string | null; mainProfile: boolean | null } | null;
}

/** A survey's versions as the response formatters take them (times in Unix seconds). */
export interface ExplorerSurveyVersion {
  versionId: string;
  publishedAt: number;
  unpublishedAt: number | null;
  definition: Record<string, unknown>;
}

/** A survey_responses row as postgres.js returns it (bigint as text). */
interface RawResponse extends Record<string, unknown> {
  id: string;
  study_key: string;
  participant_id: string;
  key: string;
  version_id: string;
  opened_at: string;
  submitted_at: string;
  arrived_at: string;
  responses: ResponseRow["responses"];
  context: ResponseRow["context"];
}

/**
 * The row as drizzle's select of the table reads it. A page's rows are read by a plain statement
 * and converted here: drizzle's row mapping (a decoder call and an entity check per column and
 * row) cost the API process several ms of CPU per 1,000 responses.
 */
function responseFromRaw(raw: RawResponse): ResponseRow {
  return {
    id: raw.id,
    studyKey: raw.study_key,
    participantId: raw.participant_id,
    key: raw.key,
    versionId: raw.version_id,
    openedAt: Number(raw.opened_at),
    submittedAt: Number(raw.submitted_at),
    arrivedAt: Number(raw.arrived_at),
    responses: raw.responses,
    context: raw.context,
  };
}

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** The survey's versions, oldest first; none when the study has no such survey (its responses still list). */
export async function surveyVersionsForFormatting(
  db: Executor,
  studyKey: string,
  surveyKey: string,
): Promise<ExplorerSurveyVersion[]> {
  const rows = await db
    .select()
    .from(surveyVersions)
    .where(and(eq(surveyVersions.studyKey, studyKey), eq(surveyVersions.surveyKey, surveyKey)))
    .orderBy(surveyVersions.id);
  return rows.map((row) => ({
    versionId: row.versionId,
    publishedAt: seconds(row.publishedAt),
    unpublishedAt: row.unpublishedAt ? seconds(row.unpublishedAt) : null,
    definition: row.definition,
  }));
}

/** Account columns of responses, read once per participant of the page (case-backend caches them per export). */
async function withAccounts(db: Executor, study: StudyRow, rows: ResponseRow[]): Promise<ExplorerResponse[]> {
  if (!study.trackAccount || rows.length === 0) return rows.map((row) => ({ ...row, account: null }));
  const ids = [...new Set(rows.map((row) => row.participantId))];
  const accounts = await db
    .select({
      participantId: participants.participantId,
      hashedAccountId: participants.hashedAccountId,
      isMainProfile: participants.isMainProfile,
    })
    .from(participants)
    .where(and(eq(participants.studyKey, study.key), inKeys(participants.participantId, ids)));
  const byId = new Map(accounts.map((account) => [account.participantId, account]));
  return rows.map((row) => {
    const account = byId.get(row.participantId);
    return {
      ...row,
      account: account ? { accountId: account.hashedAccountId, mainProfile: account.isMainProfile } : null,
    };
  });
}

function requireSurveyKey(surveyKey: string | undefined): string {
  if (!surveyKey) throw new Invalid("surveyKey is required");
  return surveyKey;
}

/** `filter` with the survey's key: case-backend sets `key` to the surveyKey whatever the filter said. */
function ofSurvey(filter: unknown, surveyKey: string): Record<string, unknown> {
  if (filter === undefined || filter === null) return { key: surveyKey };
  if (typeof filter !== "object" || Array.isArray(filter))
    throw new Invalid("filter: expected an object of conditions");
  return { ...(filter as Record<string, unknown>), key: surveyKey };
}

/** A page of one survey's responses, by submission time unless sorted. */
export async function listExplorerResponses(
  db: Executor,
  studyKey: string,
  surveyKey: string | undefined,
  query: ExplorerQuery,
  cache?: ExplorerPageCache,
): Promise<ExplorerPage<ExplorerResponse> & { study: StudyRow; surveyKey: string }> {
  const key = requireSurveyKey(surveyKey);
  const study = await getStudy(db, studyKey);
  // submittedAt first: the (study, key, submitted_at, id) index serves the default order
  const sort = query.sort ?? { submittedAt: 1 };
  const page = await readExplorerPage(
    db,
    "responses",
    studyKey,
    { ...query, sort, filter: ofSurvey(query.filter, key) },
    cache,
    async (keys, executor, within) => {
      const rows = await executor.execute<RawResponse>(
        sql`select id, study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context
            from survey_responses
            where study_key = ${studyKey} and ${within ?? inKeys(sql`id`, keys, "uuid")}`,
      );
      return withAccounts(
        executor,
        study,
        inPageOrder(keys, rows.map(responseFromRaw), (row) => row.id),
      );
    },
  );
  return { ...page, study, surveyKey: key };
}

/**
 * A page of one participant's responses to every survey (case-backend's participant responses),
 * in arrival order unless sorted. The participant's id is a condition of its own, whatever the
 * filter says. NotFound for an unknown study or participant.
 */
export async function listParticipantResponses(
  db: Executor,
  studyKey: string,
  participantId: string,
  query: ExplorerQuery,
  cache?: ExplorerPageCache,
): Promise<ExplorerPage<ResponseRow>> {
  await getStudy(db, studyKey);
  const [participant] = await db
    .select({ id: participants.id })
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .limit(1);
  if (!participant) throw new NotFound(`participant "${participantId}" not found in study "${studyKey}"`);
  const { filter } = query;
  if (filter !== undefined && filter !== null && (typeof filter !== "object" || Array.isArray(filter))) {
    throw new Invalid("filter: expected an object of conditions");
  }
  return readExplorerPage(
    db,
    "responses",
    studyKey,
    {
      ...query,
      sort: query.sort ?? { arrivedAt: 1 },
      filter: { ...(filter as Record<string, unknown> | undefined), participantID: participantId },
    },
    cache,
    async (keys, executor) => {
      const rows = await executor
        .select()
        .from(surveyResponses)
        .where(and(eq(surveyResponses.studyKey, studyKey), inKeys(surveyResponses.id, keys, "uuid")));
      return inPageOrder(keys, rows, (row) => row.id);
    },
  );
}

export async function getExplorerResponse(
  db: Executor,
  studyKey: string,
  responseId: string,
): Promise<{ response: ExplorerResponse; study: StudyRow }> {
  const study = await getStudy(db, studyKey);
  const [row] = isRowId(responseId)
    ? await db
        .select()
        .from(surveyResponses)
        .where(and(eq(surveyResponses.studyKey, studyKey), eq(surveyResponses.id, responseId)))
        .limit(1)
    : [];
  if (!row) throw new NotFound(`response "${responseId}" not found in study "${studyKey}"`);
  const [response] = await withAccounts(db, study, [row]);
  return { response: response!, study };
}

export interface DeleteResponsesInput {
  surveyKey: string | undefined;
  filter: unknown;
  /** Must repeat the study key: case-backend's confirmation that the caller means this study. */
  controlField: string | undefined;
  actor: string;
}

/**
 * Deletes the survey's responses the filter selects, in one transaction with its audit record
 * (`responses.delete`, with the filter and the count). Without `controlField` equal to the study
 * key nothing is deleted (as case-backend refuses), and the survey key always bounds the delete, so
 * an empty filter removes one survey's responses at most. No match is a 404 (case-backend: 500).
 */
export async function deleteExplorerResponses(
  db: Executor,
  studyKey: string,
  input: DeleteResponsesInput,
  cache?: ExplorerPageCache,
): Promise<number> {
  if (input.controlField !== studyKey) {
    throw new Invalid("controlField: must equal the study key to confirm deleting responses");
  }
  const surveyKey = requireSurveyKey(input.surveyKey);
  const filter = ofSurvey(input.filter, surveyKey);
  const where = translateCaseFilter("responses", filter);
  await getStudy(db, studyKey);
  const count = await db.transaction(async (tx) => {
    const deleted = await tx
      .delete(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, studyKey), where))
      .returning({ id: surveyResponses.id });
    if (deleted.length === 0) return 0;
    await recordAudit(tx, {
      studyKey,
      actor: input.actor,
      action: "responses.delete",
      target: surveyKey,
      details: { filter, count: deleted.length },
    });
    return deleted.length;
  });
  if (count === 0) throw new NotFound(`no responses of survey "${surveyKey}" match the filter`);
  cache?.forgetStudy(studyKey);
  return count;
}

/** Deletes one response, with its audit record (`response.delete`). */
export async function deleteExplorerResponse(
  db: Executor,
  studyKey: string,
  responseId: string,
  actor: string,
  cache?: ExplorerPageCache,
): Promise<void> {
  await getStudy(db, studyKey);
  const deleted = isRowId(responseId)
    ? await db.transaction(async (tx) => {
        const [row] = await tx
          .delete(surveyResponses)
          .where(and(eq(surveyResponses.studyKey, studyKey), eq(surveyResponses.id, responseId)))
          .returning({ key: surveyResponses.key, participantId: surveyResponses.participantId });
        if (row) {
          await recordAudit(tx, {
            studyKey,
            actor,
            action: "response.delete",
            target: responseId,
            details: { surveyKey: row.key, participantID: row.participantId },
          });
        }
        return row;
      })
    : undefined;
  if (!deleted) throw new NotFound(`response "${responseId}" not found in study "${studyKey}"`);
  cache?.forgetStudy(studyKey);
}
