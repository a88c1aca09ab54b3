import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import {
  dailyExportConfigs,
  dailyExports,
  storedFiles,
  surveyVersions,
  type Database,
  type DailyExportOptions,
  type Executor,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import type { ClockContext } from "../foundation/clock";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import type { FileStore } from "../files/file-store";
import type { TaskRow } from "../tasks/task-row";
import { GUARD_FORMULAS_DEFAULT, invalidFrom } from "./export-request";
import { checkResponseExportRequest, recordResponseExportTask, responseFileOptionsSchema } from "./response-export";
import { openStoredFile, type OpenedFile } from "./task-file";

/** Who the daily exports' tasks name as their creator. */
export const DAILY_EXPORT_CREATOR = "daily-export";

type DailyExportConfigRow = typeof dailyExportConfigs.$inferSelect;
/** A study's daily export settings, every option set (see effective). */
export type DailyExportConfig = Omit<DailyExportConfigRow, "options"> & { options: Required<DailyExportOptions> };

export interface DailyExportConfigInput {
  surveyKeys: string[];
  options: DailyExportOptions;
  enabled: boolean;
}

const configSchema = z.object({
  surveyKeys: z.array(z.string().min(1, "must not be empty").max(200)).max(100, "at most 100 surveys"),
  options: responseFileOptionsSchema,
  enabled: z.boolean(),
});

/**
 * The settings with every option as the exports will use it: settings saved before the formula
 * guard existed lack `guardFormulas`, and their next exports are guarded, as every export is by
 * default.
 */
function effective(row: DailyExportConfigRow): DailyExportConfig {
  return { ...row, options: { ...row.options, guardFormulas: row.options.guardFormulas ?? GUARD_FORMULAS_DEFAULT } };
}

/**
 * Sets which surveys of a study are exported every day, and how, audited in the same transaction
 * (`daily-export.update`). Every survey must have an uploaded version in the study; nothing is
 * stored on a bad request.
 */
export async function setDailyExportConfig(
  db: Database,
  studyKey: string,
  input: DailyExportConfigInput,
  updatedBy: string,
  ctx: ClockContext,
): Promise<DailyExportConfig> {
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) throw invalidFrom(parsed.error);
  const config = parsed.data;
  const surveyKeys = [...new Set(config.surveyKeys)];
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const known = new Set(
      (
        await tx
          .selectDistinct({ surveyKey: surveyVersions.surveyKey })
          .from(surveyVersions)
          .where(eq(surveyVersions.studyKey, studyKey))
      ).map((row) => row.surveyKey),
    );
    const unknown = surveyKeys.findIndex((key) => !known.has(key));
    if (unknown >= 0) {
      throw new Invalid(`surveyKeys.${unknown}: no survey "${surveyKeys[unknown]}" in study "${studyKey}"`);
    }
    const values = {
      surveyKeys,
      options: config.options,
      enabled: config.enabled,
      updatedBy,
      updatedAt: new Date(ctx.clock()),
    };
    const [row] = await tx
      .insert(dailyExportConfigs)
      .values({ studyKey, ...values })
      .onConflictDoUpdate({ target: dailyExportConfigs.studyKey, set: values })
      .returning();
    if (!row) throw new Error("daily export config upsert returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor: updatedBy,
      action: "daily-export.update",
      details: { surveyKeys, enabled: config.enabled, options: config.options },
    });
    return effective(row);
  });
}

/** The study's daily export settings; null when it never set any. */
export async function getDailyExportConfig(db: Executor, studyKey: string): Promise<DailyExportConfig | null> {
  await getStudy(db, studyKey);
  const [row] = await db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, studyKey));
  return row ? effective(row) : null;
}

/** The UTC day before `now`, as YYYY-MM-DD and its [from, to) in Unix seconds. */
export function previousDay(now: number): { day: string; from: number; to: number } {
  const to = Math.floor(now / 86_400_000) * 86_400;
  const from = to - 86_400;
  return { day: new Date(from * 1000).toISOString().slice(0, 10), from, to };
}

export interface StartedDailyExport {
  studyKey: string;
  surveyKey: string;
  day: string;
  task?: TaskRow;
  /** Why no task was recorded (e.g. the survey has no version any more). */
  skipped?: string;
}

/**
 * Records yesterday's (UTC) export task of every survey of every study with daily exports on, and
 * queues each. A day is exported once, however many workers run this and however often: the
 * (study, survey, day) row and its task commit together, and a second run finds the row there.
 * Running it more than once a day is what makes it catch up after the workers were down at
 * midnight. A task recorded but not queued (Redis down) is queued by the stale-task sweeper.
 */
export async function startDailyExports(
  db: Database,
  options: ClockContext & { now: number; queue: (task: TaskRow) => Promise<void> },
): Promise<StartedDailyExport[]> {
  const { day, from, to } = previousDay(options.now);
  const configs = await db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.enabled, true));
  const started: StartedDailyExport[] = [];
  for (const config of configs) {
    for (const surveyKey of config.surveyKeys) {
      const outcome = await db.transaction(async (tx): Promise<StartedDailyExport | null> => {
        const [claimed] = await tx
          .insert(dailyExports)
          .values({ studyKey: config.studyKey, surveyKey, day })
          .onConflictDoNothing()
          .returning({ id: dailyExports.id });
        if (!claimed) return null;
        try {
          // a savepoint: a survey that can no longer be exported leaves its day claimed, and says why
          const task = await tx.transaction(async (savepoint) => {
            const checked = checkResponseExportRequest({ surveyKey, ...config.options });
            return recordResponseExportTask(
              savepoint,
              config.studyKey,
              { ...checked, arrivedWindow: { from, to } },
              DAILY_EXPORT_CREATOR,
              options,
            );
          });
          await tx.update(dailyExports).set({ taskId: task.id }).where(eq(dailyExports.id, claimed.id));
          return { studyKey: config.studyKey, surveyKey, day, task };
        } catch (error) {
          if (!(error instanceof Invalid)) throw error;
          return { studyKey: config.studyKey, surveyKey, day, skipped: error.message };
        }
      });
      if (!outcome) continue;
      if (outcome.task) await options.queue(outcome.task);
      started.push(outcome);
    }
  }
  return started;
}

export interface DailyExportListing {
  id: string;
  surveyKey: string;
  /** The day exported, YYYY-MM-DD (UTC). */
  date: string;
  fileName: string;
  size: number;
  createdAt: Date;
}

const dailyFiles = (studyKey: string) =>
  and(eq(dailyExports.studyKey, studyKey), eq(storedFiles.complete, true), isNull(storedFiles.expiredAt));

/** A study's daily export files that are complete and not yet removed by retention, newest day first. */
export async function listDailyExports(db: Executor, studyKey: string): Promise<DailyExportListing[]> {
  await getStudy(db, studyKey);
  const rows = await db
    .select({
      id: dailyExports.id,
      surveyKey: dailyExports.surveyKey,
      date: dailyExports.day,
      fileName: storedFiles.name,
      size: storedFiles.size,
      createdAt: storedFiles.createdAt,
    })
    .from(dailyExports)
    .innerJoin(storedFiles, eq(storedFiles.taskId, dailyExports.taskId))
    .where(dailyFiles(studyKey))
    .orderBy(desc(dailyExports.day), dailyExports.surveyKey);
  return rows;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One daily export's file of this study, streamed; NotFound for another study's or an expired one. */
export async function openDailyExport(
  db: Database,
  store: FileStore,
  studyKey: string,
  exportId: string,
): Promise<OpenedFile> {
  if (!UUID.test(exportId)) throw new NotFound(`daily export "${exportId}" not found`);
  const [row] = await db
    .select({ file: storedFiles })
    .from(dailyExports)
    .innerJoin(storedFiles, eq(storedFiles.taskId, dailyExports.taskId))
    .where(and(eq(dailyExports.id, exportId), eq(dailyExports.studyKey, studyKey)))
    .limit(1);
  if (!row) throw new NotFound(`daily export "${exportId}" not found`);
  return openStoredFile(store, row.file);
}

/** Days already exported of a study, for the dashboard and tests. */
export async function dailyExportDays(db: Executor, studyKey: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(dailyExports)
    .where(eq(dailyExports.studyKey, studyKey));
  return row?.count ?? 0;
}
