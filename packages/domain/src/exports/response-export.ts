import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { createResponseFormatter, type ExportResponse, type IncludeMeta } from "@studyflow/case-export";
import {
  surveyResponses,
  surveyVersions,
  type Database,
  type Executor,
  type ResponseExportInput,
  type ResponseExportOrder,
} from "@studyflow/db";
import { translateCaseFilter, translateCaseSort } from "../case-filter/index";
import { Invalid } from "../errors";
import { nowSeconds, type ClockContext } from "../foundation/clock";
import { getStudy } from "../studies/study-repository";
import type { TaskRow } from "../tasks/task-row";
import { countSelection, jsonValue, textValue, type ExportSelection } from "./export-keyset";
import { exportKind, exportTimestamp, fileNamePart } from "./export-kind";
import { GUARD_FORMULAS_DEFAULT, invalidFrom } from "./export-request";
import { insertExportTask } from "./export-task-row";

export interface ResponseExportRequest {
  surveyKey: string;
  format: "wide" | "long" | "json";
  questionOptionSep: string;
  shortKeys: boolean;
  extraContextColumns: string[];
  includeMeta: IncludeMeta;
  /** CASE's Mongo-style filter on responses (see case-filter/). */
  filter?: unknown;
  /** CASE's sort: `{"submittedAt": 1|-1}` or `{"arrivedAt": 1|-1}`; default arrival order. */
  sort?: unknown;
  gzip: boolean;
  /**
   * Guard the CSV cells participants filled against spreadsheet formulas (see
   * `@studyflow/case-export`'s formulaGuarded); false writes CASE's bytes. @defaultValue true
   */
  guardFormulas?: boolean;
}

/**
 * How a response export is written, without which survey: the options of a one-off export and of
 * a study's daily exports alike.
 */
export const responseFileOptionsSchema = z.object({
  format: z.enum(["wide", "long", "json"]),
  questionOptionSep: z.string().max(10, "at most 10 characters"),
  shortKeys: z.boolean(),
  extraContextColumns: z.array(z.string().min(1, "must not be empty").max(200)).max(100),
  includeMeta: z.object({
    position: z.boolean(),
    initTimes: z.boolean(),
    displayedTimes: z.boolean(),
    responsedTimes: z.boolean(),
  }),
  gzip: z.boolean(),
  guardFormulas: z.boolean().default(GUARD_FORMULAS_DEFAULT),
});

const requestSchema = z.object({
  surveyKey: z.string().min(1, "must not be empty").max(200),
  ...responseFileOptionsSchema.shape,
});

/**
 * CASE's sort of a response export. Without one, CASE reads in the collection's natural order,
 * which is the order responses arrived: arrivedAt ascending here, ties broken by id.
 */
export function responseExportOrder(sort: unknown): ResponseExportOrder {
  const keys = translateCaseSort("responses", sort);
  if (keys.length === 0) return { field: "arrivedAt", direction: "asc" };
  const [key] = keys;
  if (keys.length > 1 || !key || (key.field !== "submittedAt" && key.field !== "arrivedAt")) {
    throw new Invalid('sort: a response export sorts on one of submittedAt or arrivedAt, e.g. {"submittedAt": -1}');
  }
  return { field: key.field, direction: key.direction };
}

/** The responses of an export, or of a count: the study's, of one survey, matching the filter. */
function responsesWhere(
  studyKey: string,
  selection: { surveyKey?: string; filter?: unknown; arrivedWindow?: { from: number; to: number } },
) {
  const parts = [eq(surveyResponses.studyKey, studyKey)];
  if (selection.surveyKey !== undefined) parts.push(eq(surveyResponses.key, selection.surveyKey));
  if (selection.filter !== undefined) parts.push(translateCaseFilter("responses", selection.filter));
  if (selection.arrivedWindow) {
    parts.push(sql`${surveyResponses.arrivedAt} >= ${selection.arrivedWindow.from}`);
    parts.push(sql`${surveyResponses.arrivedAt} < ${selection.arrivedWindow.to}`);
  }
  return and(...parts) ?? sql`true`;
}

/** The responses an export with this selection would hold (the study must exist). */
export async function countResponses(
  db: Executor,
  studyKey: string,
  selection: { surveyKey?: string; filter?: unknown },
): Promise<number> {
  await getStudy(db, studyKey);
  return countSelection(db, {
    from: sql`${surveyResponses}`,
    where: responsesWhere(studyKey, selection),
    keys: [],
    direction: "asc",
  });
}

async function versionsOf(db: Executor, studyKey: string, surveyKey: string) {
  const rows = await db
    .select()
    .from(surveyVersions)
    .where(and(eq(surveyVersions.studyKey, studyKey), eq(surveyVersions.surveyKey, surveyKey)))
    .orderBy(asc(surveyVersions.publishedAt), asc(surveyVersions.id));
  return rows.map((row) => ({
    versionId: row.versionId,
    publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
    unpublishedAt: row.unpublishedAt ? Math.floor(row.unpublishedAt.getTime() / 1000) : null,
    definition: row.definition,
  }));
}

const inputOf = (task: TaskRow) => task.input as ResponseExportInput;

function formatterFor(versions: Awaited<ReturnType<typeof versionsOf>>, input: ResponseExportInput) {
  return createResponseFormatter(input.surveyKey, versions, {
    format: input.format,
    questionOptionSep: input.questionOptionSep,
    shortKeys: input.shortKeys,
    extraContextColumns: input.extraContextColumns,
    includeMeta: input.includeMeta as unknown as IncludeMeta,
    accountColumns: input.accountColumns,
    now: input.now,
    // absent on tasks recorded before the guard: they go on as they began
    guardFormulas: input.guardFormulas === true,
  });
}

/**
 * The select list of a batch. The answers come as their JSON text, not parsed by the driver: the
 * formatter reads from the text only what the export's columns need (see @studyflow/case-export's
 * readItemResponsesJson) instead of parsing whole documents into objects first.
 */
const responseColumns = (accountColumns: boolean) => sql`
  ${surveyResponses.id} as id, ${surveyResponses.participantId} as participant_id, ${surveyResponses.key} as key,
  ${surveyResponses.versionId} as version_id, ${surveyResponses.openedAt} as opened_at,
  ${surveyResponses.submittedAt} as submitted_at, ${surveyResponses.arrivedAt} as arrived_at,
  ${surveyResponses.responses}::text as responses, ${surveyResponses.context} as context,
  ${accountColumns ? sql`p.hashed_account_id as hashed_account_id, p.is_main_profile as is_main_profile` : sql`null as hashed_account_id, null as is_main_profile`}`;

/** `export-responses`: one survey's responses in CASE's wide, long or JSON file. */
export const responseExportKind = exportKind<ExportResponse>({
  selection(_tx, task): Promise<ExportSelection> {
    const input = inputOf(task);
    const instant = input.order.field === "submittedAt" ? surveyResponses.submittedAt : surveyResponses.arrivedAt;
    return Promise.resolve({
      // The participant's account info rides along for studies that track accounts; the join is on
      // the participants' unique (study, participant id) index, one probe per row, and only then.
      from: input.accountColumns
        ? sql`${surveyResponses} left join participants p
          on p.study_key = ${surveyResponses.studyKey} and p.participant_id = ${surveyResponses.participantId}`
        : sql`${surveyResponses}`,
      where: responsesWhere(task.studyKey, input),
      keys: [
        { expression: sql`${instant}`, cast: "bigint" },
        { expression: sql`${surveyResponses.id}`, cast: "uuid" },
      ],
      direction: input.order.direction,
    });
  },
  columns: (task) => responseColumns(inputOf(task).accountColumns),
  toExportRow(row) {
    return {
      id: textValue(row.id),
      participantId: textValue(row.participant_id),
      key: textValue(row.key),
      versionId: textValue(row.version_id),
      openedAt: Number(row.opened_at),
      submittedAt: Number(row.submitted_at),
      arrivedAt: Number(row.arrived_at),
      responses: typeof row.responses === "string" ? row.responses : jsonValue<unknown[]>(row.responses, []),
      context: jsonValue<Record<string, string>>(row.context, {}),
      account: {
        accountId: (row.hashed_account_id as string | null) ?? null,
        mainProfile: (row.is_main_profile as boolean | null) ?? null,
      },
    };
  },
  async formatter(tx, task) {
    const input = inputOf(task);
    return formatterFor(await versionsOf(tx, task.studyKey, input.surveyKey), input);
  },
  baseName(task) {
    const input = inputOf(task);
    // a daily export is named by the day it covers
    const when = input.arrivedWindow
      ? new Date(input.arrivedWindow.from * 1000).toISOString().slice(0, 10)
      : exportTimestamp(task.createdAt);
    return `${fileNamePart(input.surveyKey)}_${input.format}_${when}`;
  },
  gzip: (task) => inputOf(task).gzip,
});

/**
 * Records a response export of one survey (status queued; the caller queues it with queueTask).
 * Everything is checked first, and nothing is written on a bad request: the survey must have an
 * uploaded version in the study (the formatter needs its definitions), the options their types,
 * the filter and sort CASE's subset. targetCount is the responses matching now.
 */
export async function createResponseExportTask(
  db: Database,
  studyKey: string,
  request: ResponseExportRequest,
  createdBy: string,
  ctx: ClockContext,
): Promise<TaskRow> {
  const checked = checkResponseExportRequest(request);
  return db.transaction((tx) => recordResponseExportTask(tx, studyKey, checked, createdBy, ctx));
}

/** A request whose options, filter and sort passed; what recordResponseExportTask takes. */
export interface CheckedResponseExportRequest {
  options: z.output<typeof requestSchema>;
  order: ResponseExportOrder;
  filter?: unknown;
  /** A daily export's window of arrival times, [from, to) in Unix seconds. */
  arrivedWindow?: { from: number; to: number };
}

export function checkResponseExportRequest(request: ResponseExportRequest): CheckedResponseExportRequest {
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) throw invalidFrom(parsed.error);
  const order = responseExportOrder(request.sort);
  if (request.filter !== undefined) translateCaseFilter("responses", request.filter);
  return { options: parsed.data, order, ...(request.filter === undefined ? {} : { filter: request.filter }) };
}

/** Records a checked response export in the caller's transaction (see createResponseExportTask). */
export async function recordResponseExportTask(
  tx: Executor,
  studyKey: string,
  request: CheckedResponseExportRequest,
  createdBy: string,
  ctx: ClockContext,
): Promise<TaskRow> {
  const { options, order } = request;
  const study = await getStudy(tx, studyKey);
  const versions = await versionsOf(tx, studyKey, options.surveyKey);
  if (versions.length === 0) throw new Invalid(`surveyKey: no survey "${options.surveyKey}" in study "${studyKey}"`);
  const input: ResponseExportInput = {
    surveyKey: options.surveyKey,
    format: options.format,
    questionOptionSep: options.questionOptionSep,
    shortKeys: options.shortKeys,
    extraContextColumns: options.extraContextColumns,
    includeMeta: options.includeMeta,
    order,
    accountColumns: study.trackAccount,
    now: nowSeconds(ctx),
    gzip: options.gzip,
    guardFormulas: options.guardFormulas,
    ...(request.filter === undefined ? {} : { filter: request.filter }),
    ...(request.arrivedWindow ? { arrivedWindow: request.arrivedWindow } : {}),
  };
  const formatter = formatterFor(versions, input);
  const targetCount = await countSelection(tx, {
    from: sql`${surveyResponses}`,
    where: responsesWhere(studyKey, input),
    keys: [],
    direction: "asc",
  });
  return insertExportTask(tx, {
    studyKey,
    kind: "export-responses",
    input,
    createdBy,
    targetCount,
    fileType: formatter.contentType,
  });
}
