import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getRulesVersion } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { caseStudyRulesSchema, presentCaseStudyRules } from "@studyflow/presenters/case-study-rules";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { rulesVersionIdParams } from "./rules-version-id";

export function registerGetCaseRulesVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/versions/{id}",
      bothSlashes: true,
      tags: ["rules"],
      summary: "One rules version with its rules (CASE)",
      description: "Requires `read-study-config` or `manage-rules`.",
      security: MANAGEMENT_SECURITY,
      request: { params: rulesVersionIdParams },
      responses: {
        200: jsonContent(z.object({ studyRules: caseStudyRulesSchema }), "the rules version"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or version not found" }),
      },
    },
    async (c) => {
      const { studyKey, id } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-rules"]);
      const version = await getRulesVersion(db, studyKey, Number(id));
      return c.json({ studyRules: presentCaseStudyRules(studyKey, version) }, 200);
    },
  );
}
