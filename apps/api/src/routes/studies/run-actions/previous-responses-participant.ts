import { assertStudyPermission } from "@studyflow/domain/access";
import { runRulesOnPreviousResponses } from "@studyflow/domain/bulk";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { participantParams } from "../participants/participant-params";
import { previousResponsesBody, selectionOf, validatedRules } from "./case-rules";
import { participantRunAnswer, participantRunResponses } from "./rule-run-answers";

export function registerPreviousResponsesForParticipant(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/previous-responses/{participantID}",
      tags: ["run-actions"],
      summary: "Replay one participant's stored responses through rules, at once (CASE)",
      description:
        "The participant's responses (only `surveyKeys` if given; arrived after `from` and before `to`, Unix " +
        "seconds, when > 0) in arrival order, each as a SUBMIT event on the state the previous one left; " +
        "reports are dated at the response's submission and linked to it. One transaction: a rule failing at " +
        "run time fails the run (422) and nothing of it stays. Answers `participantCount` (0 for an unknown " +
        "id), `duration` (seconds) and `ruleResults` (all zeros, as case-backend reports this action). Audited " +
        "(`run-actions.previous-responses`). Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams },
      caseBody: previousResponsesBody,
      responses: participantRunResponses(
        "the responses were replayed",
        "invalid body or invalid rules (the message names the field or JSON path)",
        "a rule failed on one of the responses; nothing was written",
      ),
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(deps.database.db, who, studyKey, "run-study-action");
      const body = c.req.valid("json");
      const rules = validatedRules(body.rules);
      const result = await runRulesOnPreviousResponses(
        deps.database.db,
        { studyKey, participantId: participantID, rules, actor: who.subject, ...selectionOf(body) },
        domainContext(deps),
      );
      return c.json(participantRunAnswer(result), 200);
    },
  );
}
