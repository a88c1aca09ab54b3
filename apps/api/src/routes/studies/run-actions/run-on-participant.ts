import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { runRulesOnParticipant } from "@studyflow/domain/bulk";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { participantParams } from "../participants/participant-params";
import { rulesField, validatedRules } from "./case-rules";
import { participantRunAnswer, participantRunResponses } from "./rule-run-answers";

export function registerRunOnParticipant(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/participants/{participantID}",
      tags: ["run-actions"],
      summary: "Run rule actions on one participant, at once (CASE)",
      description:
        "Runs the rules on the participant with a CUSTOM event, whatever its status, in one transaction, and " +
        "answers when done: `participantCount` (0 when the id names no participant), `duration` in seconds and " +
        "`ruleResults` (per rule, 1 when it changed the state). A rule that fails at run time leaves the " +
        "participant as it was: 422, the failure recorded among the study's rule failures. Audited " +
        "(`run-actions.participant`). Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams },
      caseBody: z.object({ rules: rulesField }),
      responses: participantRunResponses(
        "the rules ran",
        "invalid body or invalid rules (the message names the JSON path)",
        "a rule failed on the participant; nothing was written",
      ),
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(deps.database.db, who, studyKey, "run-study-action");
      const rules = validatedRules(c.req.valid("json").rules);
      const result = await runRulesOnParticipant(
        deps.database.db,
        { studyKey, participantId: participantID, rules, actor: who.subject },
        domainContext(deps),
      );
      return c.json(participantRunAnswer(result), 200);
    },
  );
}
