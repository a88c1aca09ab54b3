import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getRulesVersion } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentRulesVersion, rulesVersionSchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerGetRulesVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{version}",
      tags: ["rules"],
      summary: "One rules version with its rules",
      description: "`current` is the highest version, the one participant events run. Requires `manage-rules`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam.extend({
          version: z
            .string()
            .regex(/^(current|[1-9]\d{0,8})$/, "version must be a version number or current")
            .openapi({ param: { name: "version", in: "path" }, example: "current" }),
        }),
      },
      responses: {
        200: jsonContent(rulesVersionSchema, "the rules version"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or version not found, or no rules yet" }),
      },
    },
    async (c) => {
      const { studyKey, version } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "manage-rules");
      const stored = await getRulesVersion(db, studyKey, version === "current" ? "current" : Number(version));
      return c.json(presentRulesVersion(stored), 200);
    },
  );
}
