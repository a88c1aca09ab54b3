import { createRoute, z, type OpenAPIHono, type RouteHandler } from "@hono/zod-openapi";
import { validateRules } from "@studyflow/engine";
import { Invalid, assertStudyPermission, createRunActionsTask } from "@studyflow/domain";
import { queueTask } from "@studyflow/queue";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentTask, taskEnvelope } from "../../presenters/task";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, MAX_RULES, jsonBody, jsonContent, studyKeyParam } from "../schemas";

const expressionSchema = z
  .object({ name: z.string() })
  .passthrough()
  .openapi("Expression", { description: "A CASE study-engine expression: {name, data?: ExpressionArg[]}" });

const route = createRoute({
  method: "post",
  // The trailing slash is part of the published path; a mount-relative "/" would drop it.
  path: "/participants/",
  tags: ["run-actions"],
  summary: "Run rule actions on every participant of a study (background task)",
  description:
    "Validates the rules, records a Task and queues it; workers apply the rules to every participant except " +
    "deleted accounts and temporary participants, with a CUSTOM event. `dryRun` evaluates and counts without " +
    "writing participants. Requires `run-study-action`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: studyKeyParam,
    body: jsonBody(
      z.object({
        rules: z.array(expressionSchema).max(MAX_RULES, `at most ${MAX_RULES} rules`),
        dryRun: z.boolean().optional(),
      }),
    ),
  },
  responses: {
    202: jsonContent(taskEnvelope, "task created and queued"),
    ...errorResponses([400, 401, 403, 404, 503], {
      400: "invalid body or invalid rules (the message names the JSON path)",
      404: "study not found",
      503: "the job queue is unavailable",
    }),
  },
});

/** The same operation without the spec's trailing slash, which clients often drop; not documented twice. */
const routeWithoutSlash = createRoute({ ...route, path: "/participants", hide: true });

export function registerCreateTask(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
    const { studyKey } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(deps.database.db, who, studyKey, "run-study-action");
    const body = c.req.valid("json");
    const validation = validateRules(body.rules);
    if (!validation.ok) {
      const shown = validation.errors.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
      const more = validation.errors.length > 5 ? ` (and ${validation.errors.length - 5} more)` : "";
      throw new Invalid(`invalid rules: ${shown.join("; ")}${more}`);
    }
    const task = await createRunActionsTask(
      deps.database.db,
      { studyKey, rules: validation.rules, dryRun: body.dryRun ?? false, createdBy: who.subject },
      (taskId) => queueTask(deps.runActionsQueue, { id: taskId, kind: "run-actions" }),
    );
    return c.json({ task: presentTask(task) }, 202);
  };
  router.openapi(route, handler);
  router.openapi(routeWithoutSlash, handler);
}
