import { assertStudyPermission } from "@studyflow/domain/access";
import { getRulesVersion } from "@studyflow/domain/study-config";
import { setStudyRules } from "@studyflow/domain/study-setup";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentRulesVersionSummary, rulesVersionSummarySchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, ruleSetBody, studyKeyParam } from "../../schemas";

export function registerSetRules(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      bothSlashes: true,
      tags: ["rules"],
      summary: "Store a rule set as the study's next rules version",
      description:
        "The rules are checked with the engine's validator first; an invalid set is a 400 naming the JSON path of " +
        "each problem (`rules[2].data[1].exp: …`) and stores nothing. The new version is current at once: the next " +
        "participant event runs it. Answers case-backend's message with the stored version's summary beside it. " +
        "Recorded in the audit log (`rules.set`). Requires `update-study-rules` (or `manage-rules`).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: ruleSetBody,
      responses: {
        200: jsonContent(messageSchema.merge(rulesVersionSummarySchema), "the stored version"),
        ...errorResponses([400, 401, 403, 404], {
          400: "invalid rules (the message names the JSON path) or no rules array",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-rules");
      const { rules } = c.req.valid("json");
      const version = await setStudyRules(db, studyKey, rules, who.subject);
      const stored = await getRulesVersion(db, studyKey, version);
      return c.json(
        {
          message: "new study rules version published",
          ...presentRulesVersionSummary({ ...stored, ruleCount: stored.rules.length }),
        },
        200,
      );
    },
  );
}
