import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, deleteStudyVariable } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { variableParams } from "./variable-params";

const route = createRoute({
  method: "delete",
  path: "/{key}",
  tags: ["study-variables"],
  summary: "Delete a study variable",
  description:
    "Rules that read or update it fail from then on (recorded as rule failures). Recorded in the audit log " +
    "(`variable.delete`, with its last value). Requires `manage-study-variables`.",
  security: MANAGEMENT_SECURITY,
  request: { params: variableParams },
  responses: {
    204: { description: "variable deleted" },
    ...errorResponses([400, 401, 403, 404], { 404: "study or variable not found" }),
  },
});

export function registerDeleteVariable(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey, key } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "manage-study-variables");
    await deleteStudyVariable(db, studyKey, key, who.subject);
    return c.body(null, 204);
  });
}
