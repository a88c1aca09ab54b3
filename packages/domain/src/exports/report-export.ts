import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { createReportFormatter, type ExportReport } from "@studyflow/case-export";
import { reports, tasks, type Database, type Executor, type ReportExportInput } from "@studyflow/db";
import { translateCaseFilter, translateCaseSort } from "../case-filter/index";
import { Invalid } from "../errors";
import { getStudy } from "../studies/study-repository";
import type { TaskRow } from "../tasks/task-row";
import { countSelection, jsonValue, textValue, type ExportSelection } from "./export-keyset";
import { exportKind, exportTimestamp, fileNamePart } from "./export-kind";
import { GUARD_FORMULAS_DEFAULT, invalidFrom } from "./export-request";
import { insertExportTask } from "./export-task-row";

export interface ReportExportRequest {
  /** Only reports of this key; all keys when absent. */
  reportKey?: string;
  /** CASE's `type`: "raw" (its JSON document, the default) or "csv". */
  format?: "raw" | "csv";
  /** CASE's Mongo-style filter on reports (see case-filter/). */
  filter?: unknown;
  /** `{"timestamp": 1}` or `{"timestamp": -1}`; default ascending. */
  sort?: unknown;
  gzip: boolean;
  /** Guard the CSV's data values against spreadsheet formulas (as a response export). @defaultValue true */
  guardFormulas?: boolean;
}

const requestSchema = z.object({
  reportKey: z.string().min(1, "must not be empty").max(200).optional(),
  format: z.enum(["raw", "csv"]).optional(),
  gzip: z.boolean(),
  guardFormulas: z.boolean().default(GUARD_FORMULAS_DEFAULT),
});

/** Reports export in (timestamp, id) order, either direction: the keyset of their index. */
function reportDirection(sort: unknown): "asc" | "desc" {
  const keys = translateCaseSort("reports", sort);
  if (keys.length === 0) return "asc";
  const [key] = keys;
  if (keys.length > 1 || key?.field !== "timestamp") {
    throw new Invalid('sort: a report export sorts on timestamp only, e.g. {"timestamp": -1}');
  }
  return key.direction;
}

function reportsWhere(studyKey: string, selection: { reportKey?: string; filter?: unknown }) {
  const parts = [eq(reports.studyKey, studyKey)];
  if (selection.reportKey !== undefined) parts.push(eq(reports.key, selection.reportKey));
  if (selection.filter !== undefined) parts.push(translateCaseFilter("reports", selection.filter));
  return and(...parts) ?? sql`true`;
}

/** The reports an export with this selection would hold (the study must exist). */
export async function countReports(
  db: Executor,
  studyKey: string,
  selection: { reportKey?: string; filter?: unknown },
): Promise<number> {
  await getStudy(db, studyKey);
  return countSelection(db, {
    from: sql`${reports}`,
    where: reportsWhere(studyKey, selection),
    keys: [],
    direction: "asc",
  });
}

interface StoredReportExportInput extends ReportExportInput {
  direction?: "asc" | "desc";
}

const inputOf = (task: TaskRow) => task.input as StoredReportExportInput;

/** The data keys of the reports being exported, for the csv header (as CASE reads them first). */
async function dataKeysOf(tx: Executor, studyKey: string, input: ReportExportInput): Promise<string[]> {
  const rows = await tx.execute<{ key: string }>(sql`
    select distinct element->>'key' as key
    from ${reports}, jsonb_array_elements(${reports.data}) element
    where ${reportsWhere(studyKey, input)} and element->>'key' is not null`);
  return rows.map((row) => row.key);
}

/** `export-reports`: the study's reports in CASE's JSON document or its CSV. */
export const reportExportKind = exportKind<ExportReport>({
  selection(_tx, task): Promise<ExportSelection> {
    const input = inputOf(task);
    return Promise.resolve({
      from: sql`${reports}`,
      where: reportsWhere(task.studyKey, input),
      keys: [
        { expression: sql`${reports.timestamp}`, cast: "bigint" },
        { expression: sql`${reports.id}`, cast: "uuid" },
      ],
      direction: input.direction ?? "asc",
    });
  },
  columns: () => sql`${reports.id} as id, ${reports.key} as key, ${reports.participantId} as participant_id,
    ${reports.responseId} as response_id, ${reports.timestamp} as timestamp, ${reports.data} as data`,
  toExportRow(row) {
    return {
      id: textValue(row.id),
      key: textValue(row.key),
      participantId: textValue(row.participant_id),
      responseId: row.response_id === null ? null : textValue(row.response_id),
      timestamp: Number(row.timestamp),
      data: jsonValue(row.data, []),
    };
  },
  async formatter(tx, task) {
    const input = inputOf(task);
    if (input.format !== "csv") return createReportFormatter({ format: "json" });
    // Fixed once, when planning (see dataKeys): every chunk and the header agree on the columns.
    const dataKeys = input.dataKeys ?? (await dataKeysOf(tx, task.studyKey, input));
    return createReportFormatter({ format: "csv", dataKeys, guardFormulas: input.guardFormulas === true });
  },
  baseName: (task) =>
    `reports_${inputOf(task).reportKey ? `${fileNamePart(inputOf(task).reportKey ?? "")}_` : ""}${exportTimestamp(task.createdAt)}`,
  gzip: (task) => inputOf(task).gzip,
  // The csv columns are learnt when the task is planned, then kept in its input.
  async beforePlan(tx, task) {
    const input = inputOf(task);
    if (input.format !== "csv" || input.dataKeys !== undefined) return task;
    const updated: StoredReportExportInput = { ...input, dataKeys: await dataKeysOf(tx, task.studyKey, input) };
    await tx.update(tasks).set({ input: updated }).where(eq(tasks.id, task.id));
    return { ...task, input: updated };
  },
});

/** Records a report export (status queued; the caller queues it with queueTask). */
export async function createReportExportTask(
  db: Database,
  studyKey: string,
  request: ReportExportRequest,
  createdBy: string,
): Promise<TaskRow> {
  const parsed = requestSchema.safeParse({
    reportKey: request.reportKey,
    format: request.format,
    gzip: request.gzip,
    guardFormulas: request.guardFormulas,
  });
  if (!parsed.success) throw invalidFrom(parsed.error);
  const direction = reportDirection(request.sort);
  if (request.filter !== undefined) translateCaseFilter("reports", request.filter);
  const format = parsed.data.format ?? "raw";
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const input: StoredReportExportInput = {
      format,
      direction,
      gzip: parsed.data.gzip,
      guardFormulas: parsed.data.guardFormulas,
      ...(parsed.data.reportKey === undefined ? {} : { reportKey: parsed.data.reportKey }),
      ...(request.filter === undefined ? {} : { filter: request.filter }),
    };
    const targetCount = await countSelection(tx, {
      from: sql`${reports}`,
      where: reportsWhere(studyKey, input),
      keys: [],
      direction: "asc",
    });
    const contentType = format === "csv" ? "text/csv" : createReportFormatter({ format: "json" }).contentType;
    return insertExportTask(tx, {
      studyKey,
      kind: "export-reports",
      input,
      createdBy,
      targetCount,
      fileType: contentType,
    });
  });
}
