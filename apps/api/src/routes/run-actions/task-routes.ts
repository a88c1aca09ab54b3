import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Database } from "@studyflow/db";
import { Conflict, NotFound, assertStudyPermission, cancelTask, getVisibleTask } from "@studyflow/domain";
import { presentTask } from "../../presenters/task";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { MANAGEMENT_SECURITY, authErrors, errorResponse, jsonContent, keyString, taskEnvelope } from "../schemas";

export const taskParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } }),
  taskID: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: "taskID", in: "path" } }),
});

const BASE = "/v1/studies/{studyKey}/run-actions/participants/task/{taskID}";
const notFoundOrForbidden = {
  ...authErrors,
  404: errorResponse("no such task in this study"),
};

const getTask = createRoute({
  method: "get",
  path: BASE,
  tags: ["run-actions"],
  summary: "Status and progress of a run-actions task",
  security: MANAGEMENT_SECURITY,
  request: { params: taskParams },
  responses: { 200: jsonContent(taskEnvelope, "the task"), ...notFoundOrForbidden },
});

export const resultDocumentSchema = z
  .object({
    participantCount: z.number().int(),
    participantStateChangedPerRule: z.array(z.number().int()),
    errorCount: z.number().int(),
    errors: z.array(z.object({ participantId: z.string(), error: z.string() })),
    durationMs: z.number(),
    dryRun: z.boolean(),
  })
  .openapi("RunActionsResult");

const getResult = createRoute({
  method: "get",
  path: `${BASE}/result`,
  tags: ["run-actions"],
  summary: "Result document of a completed run-actions task",
  security: MANAGEMENT_SECURITY,
  request: { params: taskParams },
  responses: {
    200: jsonContent(resultDocumentSchema, "the result document"),
    ...notFoundOrForbidden,
    409: errorResponse("the task has not completed"),
  },
});

const cancel = createRoute({
  method: "post",
  path: `${BASE}/cancel`,
  tags: ["run-actions"],
  summary: "Cancel a queued or running task; batches already written stay",
  security: MANAGEMENT_SECURITY,
  request: { params: taskParams },
  responses: {
    200: jsonContent(taskEnvelope, "the canceled task"),
    ...notFoundOrForbidden,
    409: errorResponse("the task has already ended"),
  },
});

/** Resolves a task's result file inside the result directory, refusing anything that escapes it. */
export function resultPath(resultDir: string, resultFile: string): string {
  const root = path.resolve(resultDir);
  const full = path.resolve(root, resultFile);
  if (!full.startsWith(root + path.sep)) throw new NotFound("result file not found");
  return full;
}

/**
 * The checks every task route makes: `run-study-action` on the study of the URL, then the caller
 * may see the task (its creator or an admin, and the task belongs to that study).
 */
export async function visibleTaskOf(c: Context<AppEnv>, db: Database, params: z.infer<typeof taskParams>) {
  const who = managementOf(c);
  await assertStudyPermission(db, who, params.studyKey, "run-study-action");
  return { who, task: await getVisibleTask(db, params.studyKey, params.taskID, who) };
}

export function registerTaskRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;

  router.openapi(getTask, async (c) => {
    const { task } = await visibleTaskOf(c, db, c.req.valid("param"));
    return c.json({ task: presentTask(task) }, 200);
  });

  router.openapi(getResult, async (c) => {
    const { task } = await visibleTaskOf(c, db, c.req.valid("param"));
    if (task.status !== "completed") throw new Conflict(`task has not completed (status "${task.status}")`);
    if (!task.resultFile) throw new NotFound("task has no result file");
    let text: string;
    try {
      text = await readFile(resultPath(deps.config.RESULT_DIR, task.resultFile), "utf8");
    } catch {
      throw new NotFound("result file not found; it may have been removed from the file store");
    }
    return c.json(JSON.parse(text) as z.infer<typeof resultDocumentSchema>, 200);
  });

  router.openapi(cancel, async (c) => {
    const { who, task } = await visibleTaskOf(c, db, c.req.valid("param"));
    return c.json({ task: presentTask(await cancelTask(db, task, who)) }, 200);
  });
}
