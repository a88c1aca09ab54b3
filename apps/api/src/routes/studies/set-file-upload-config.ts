import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { setParticipantFileUploadRule } from "@studyflow/domain/participant-files";
import { invalidRulesError } from "@studyflow/domain/rules";
import { validateExpression } from "@studyflow/engine";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

/** case-backend's simplified rules: `gt(1, 0)` always allows, `gt(0, 1)` never does. */
const comparison = (left: number, right: number) => ({
  name: "gt",
  data: [
    { dtype: "num", num: left },
    { dtype: "num", num: right },
  ],
});

export function registerSetFileUploadConfig(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/file-upload-config",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Set which participant file uploads a study accepts (CASE)",
      description:
        "Sets `configs.participantFileUploadRule`: `expression` when given (checked by the rules engine; 400 names " +
        "`expression`), else `simplifiedAllowedUpload` true → always allowed, false → never. Audited " +
        "(`study.config.update`). Requires `update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({
        simplifiedAllowedUpload: z.boolean().optional(),
        expression: z.unknown().optional(),
      }),
      responses: {
        200: jsonContent(messageSchema, "the rule is set"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      const { simplifiedAllowedUpload, expression } = c.req.valid("json");
      let rule: unknown;
      if (expression !== undefined && expression !== null) {
        const issues = validateExpression(expression, "expression");
        if (issues.length > 0) {
          throw invalidRulesError(issues, { countHidden: false });
        }
        rule = expression;
      } else {
        rule = simplifiedAllowedUpload === true ? comparison(1, 0) : comparison(0, 1);
      }
      await setParticipantFileUploadRule(db, studyKey, rule, who.subject, deps);
      return c.json({ message: "file upload config updated" }, 200);
    },
  );
}
