import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TaskRow } from "@studyflow/domain/tasks";
import { queueTask } from "@studyflow/queue";
import { loggerOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseTaskSchema, presentCaseTask } from "@studyflow/presenters/case-task";
import type { ExportGroup } from "./export-groups";
import { goBoolQuery } from "./case-query";

/** What the POST of an export answers, as CASE does: `{task}`, or `{error}` (still 200) when nothing matches. */
export const startExportAnswer = z
  .object({
    task: caseTaskSchema.optional(),
    error: z.string().optional().openapi({
      description:
        'present instead of `task` when nothing matches, e.g. "no responses to export" (CASE answers so with 200)',
    }),
  })
  .openapi("CaseExportStarted");

/** `gzip=true` (studyflow's addition): the file is stored and sent gzip-compressed. */
export const gzipQuery = goBoolQuery(
  "gzip",
  "studyflow's addition: store the file gzip-compressed (sent with Content-Encoding: gzip); default false",
);

/**
 * `guardFormulas=false` (studyflow's addition): CASE's exact bytes. By default the CSV cells
 * participants filled are guarded against spreadsheet formulas; case-admin never sends this, so its
 * exports are guarded.
 */
export const guardFormulasQuery = goBoolQuery(
  "guardFormulas",
  "studyflow's addition: CSV cells participants filled that start with =, +, -, @, tab or CR (and are no plain " +
    "number) get a ' in front so that spreadsheets show them as text; the header and ids are never changed. " +
    "Default true; false writes case-backend's exact bytes",
);

/**
 * The steps every export POST takes once its input is read: count what the export would hold —
 * nothing is answered as case-backend answers it (200 `{"error": "no <noun> to export"}`, no task)
 * — then record the task (the domain validates and counts again in its transaction) and queue it
 * for the workers. The task is committed before it is queued: if Redis refuses the job, the answer
 * is still the task (a retry would record a second one), and the workers' stale-task sweeper
 * queues a queued task that has no job.
 */
export async function startExport(
  c: Context<AppEnv>,
  deps: AppDeps,
  group: ExportGroup,
  steps: { count: () => Promise<number>; create: () => Promise<TaskRow> },
) {
  if ((await steps.count()) === 0) return c.json({ error: `no ${group.noun} to export` }, 200);
  const task = await steps.create();
  try {
    await queueTask(deps.taskQueue, task);
  } catch (error) {
    loggerOf(c).warn({ err: error, taskId: task.id }, "export task recorded but not queued; the sweeper will queue it");
  }
  return c.json({ task: presentCaseTask(task) }, 200);
}
