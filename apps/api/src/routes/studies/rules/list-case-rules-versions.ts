import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listRulesVersions } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { caseRulesVersionListedSchema, presentCaseRulesListed } from "@studyflow/presenters/case-study-rules";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListCaseRulesVersions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/versions",
      bothSlashes: true,
      tags: ["rules"],
      summary: "A study's rules versions, newest (current) first, without their rules (CASE)",
      description:
        "case-backend's list: `id` (the version number), `uploadedAt` (Unix seconds), `uploadedBy`, `rules: null`; " +
        "studyflow's `version` and `ruleCount` beside them. Requires `read-study-config` or `manage-rules`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ versions: z.array(caseRulesVersionListedSchema) }), "the rules versions"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-rules"]);
      const versions = await listRulesVersions(db, studyKey);
      return c.json({ versions: versions.map((v) => presentCaseRulesListed(studyKey, v)) }, 200);
    },
  );
}
