import { z } from "@hono/zod-openapi";
import { validateRules } from "@studyflow/engine";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, ruleSetBody, studyKeyParam } from "../../schemas";

/** Enough to mark every problem an editor shows at once; a broken paste can have thousands. */
const MAX_ISSUES = 100;

const issueSchema = z
  .object({
    path: z.string().openapi({ example: "rules[1].data[0].exp.name" }),
    message: z.string().openapi({ example: 'unknown expression "hasStudyStatuss"' }),
  })
  .openapi("RuleIssue");

export function registerValidateRules(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/validate",
      tags: ["run-actions"],
      summary: "Check rules as a run-actions task would, without starting one",
      description:
        "The validator the task route runs before it records anything: every problem with the JSON path of the " +
        "offending value (at most 100; `issueCount` counts all). Rules that pass here pass there. Writes nothing; the " +
        "console's rules editor calls it as you type. Requires `run-study-action`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        body: jsonBody(ruleSetBody),
      },
      responses: {
        200: jsonContent(
          z.object({
            valid: z.boolean(),
            issues: z.array(issueSchema),
            issueCount: z.number().int(),
          }),
          "the outcome: valid, or the problems found",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "not a body with a rules array",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "run-study-action");
      await getStudy(db, studyKey);
      const validation = validateRules(c.req.valid("json").rules);
      const issues = validation.ok ? [] : validation.errors;
      return c.json({ valid: validation.ok, issues: issues.slice(0, MAX_ISSUES), issueCount: issues.length }, 200);
    },
  );
}
