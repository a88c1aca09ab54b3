import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseTaskEnvelope, presentCaseTask } from "@studyflow/presenters/case-task";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { previousResponsesBody, selectionOf } from "./case-rules";
import { startRuleTaskResponses } from "./rule-run-answers";
import { startRuleTask } from "./start-rule-task";
import { PREVIOUS_RESPONSES_KIND } from "./previous-responses-task-access";

export function registerStartPreviousResponsesTask(router: ApiRouter, deps: AppDeps) {
  defineRoute(
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
      caseBody: previousResponsesBody,
      responses: startRuleTaskResponses(
        caseTaskEnvelope,
        "invalid body or invalid rules (the message names the field or JSON path)",
      ),
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const body = c.req.valid("json");
      const task = await startRuleTask(deps, managementOf(c), studyKey, body.rules, (rules) => ({
        kind: PREVIOUS_RESPONSES_KIND,
        input: { rules, ...selectionOf(body) },
      }));
      return c.json({ task: presentCaseTask(task) }, 200);
    },
  );
}
