import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listRulesVersions } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentRulesVersionSummary, rulesVersionSummarySchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListRulesVersions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["rules"],
      summary: "A study's rules versions, newest (current) first",
      description: "Each version's number, uploader, upload time and rule count. Requires `manage-rules`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ versions: z.array(rulesVersionSummarySchema) }), "the rules versions"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-rules");
      const versions = await listRulesVersions(db, studyKey);
      return c.json({ versions: versions.map(presentRulesVersionSummary) }, 200);
    },
  );
}
