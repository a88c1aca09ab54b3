import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { NotFound, assertStudyPermission, getVisibleTask, type TaskRow } from "@studyflow/domain";
import type { Context } from "hono";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat/case-route";
import type { AppDeps } from "../../deps";
import { caseTaskEnvelope, presentCaseTask } from "@studyflow/presenters/case-task";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";
import { previousResponsesBody, selectionOf } from "./case-rules";
import { readResultDocument, resultDocumentSchema } from "./result-file";
import { startRuleTask } from "./start-rule-task";
import { taskParams } from "./visible-task";

const KIND = "run-actions-previous-responses" as const;

/** A previous-responses task of the URL's study the caller may see (its creator or an admin); other kinds are 404. */
async function previousResponsesTaskOf(
  c: Context<AppEnv>,
  deps: AppDeps,
  params: z.infer<typeof taskParams>,
): Promise<TaskRow> {
  const who = managementOf(c);
  await assertStudyPermission(deps.database.db, who, params.studyKey, "run-study-action");
  const task = await getVisibleTask(deps.database.db, params.studyKey, params.taskID, who);
  if (task.kind !== KIND) throw new NotFound(`task "${params.taskID}" not found`);
  return task;
}

export function registerPreviousResponsesTask(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  caseRoute(
    router,
    {
      method: "post",
      path: "/previous-responses/",
      tags: ["run-actions"],
      summary: "Replay every participant's stored responses through rules (background task, CASE)",
      description:
        "Validates the rules, records a `run-actions-previous-responses` Task and queues it; workers replay " +
        "each participant's responses (deleted accounts and temporary participants left out; `surveyKeys`, " +
        "`from`/`to` as for one participant) in arrival order as SUBMIT events. A participant whose rules fail " +
        "keeps its state and is listed among the result's errors. Answers 200 with the task in CASE's shape; " +
        "follow it at `…/previous-responses/task/{taskID}`. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      body: previousResponsesBody,
      responses: {
        200: jsonContent(caseTaskEnvelope, "task created and queued"),
        ...errorResponses([400, 401, 403, 404, 503], {
          400: "invalid body or invalid rules (the message names the field or JSON path)",
          404: "study not found",
          503: "the job queue is unavailable",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const body = c.req.valid("json");
      const task = await startRuleTask(deps, managementOf(c), studyKey, body.rules, (rules) => ({
        kind: KIND,
        input: { rules, ...selectionOf(body) },
      }));
      return c.json({ task: presentCaseTask(task) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/previous-responses/task/{taskID}",
      tags: ["run-actions"],
      summary: "Status of a previous-responses task (CASE)",
      description:
        "The task in CASE's shape (`completed` once it ended; a failure or cancel shows `error`). Its creator or " +
        "an admin may see it. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(caseTaskEnvelope, "the task"),
        ...errorResponses([401, 403, 404], { 404: "no previous-responses task with this id in this study" }),
      },
    },
    async (c) => c.json({ task: presentCaseTask(await previousResponsesTaskOf(c, deps, c.req.valid("param"))) }, 200),
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/previous-responses/task/{taskID}/result",
      tags: ["run-actions"],
      summary: "Result of a completed previous-responses task (CASE)",
      description:
        "`{result}`: the task's result document (participants processed, errors, duration), as case-backend " +
        "wraps it; case-admin downloads it as a file. 409 until the task completed. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: taskParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ result: resultDocumentSchema }), "the result document"),
        ...errorResponses([401, 403, 404, 409], {
          404: "no previous-responses task with this id in this study, or its file was removed",
          409: "the task has not completed",
        }),
      },
    },
    async (c) => {
      const task = await previousResponsesTaskOf(c, deps, c.req.valid("param"));
      const result = await readResultDocument(deps.config.RESULT_DIR, task);
      c.header("Content-Disposition", `attachment; filename=previous-responses-${task.id}.json`);
      return c.json({ result }, 200);
    },
  );
}
