import { z } from "@hono/zod-openapi";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentTask, taskEnvelope } from "@studyflow/presenters/task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { rulesField } from "./case-rules";
import { startRuleTaskResponses } from "./rule-run-answers";
import { startRuleTask } from "./start-rule-task";

export function registerCreateTask(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      // The trailing slash is part of the published path; the form without it is served too (hidden).
      path: "/participants/",
      tags: ["run-actions"],
      summary: "Run rule actions on every participant of a study (background task)",
      description:
        "Validates the rules, records a Task and queues it; workers apply the rules to every participant except " +
        "deleted accounts and temporary participants, with a CUSTOM event. `dryRun` evaluates and counts without " +
        "writing participants. Answers 200 with the queued task, as case-backend does (case-admin follows it at " +
        "`…/task/{id}` here or under data-exporter/participants). The body may be sent as text/plain with " +
        "case-insensitive keys. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({ rules: rulesField, dryRun: z.boolean().optional() }),
      responses: startRuleTaskResponses(
        taskEnvelope,
        "invalid body or invalid rules (the message names the JSON path)",
      ),
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const body = c.req.valid("json");
      const task = await startRuleTask(deps, managementOf(c), studyKey, body.rules, (rules) => ({
        kind: "run-actions",
        input: { rules, dryRun: body.dryRun ?? false },
      }));
      return c.json({ task: presentTask(task) }, 200);
    },
  );
}
