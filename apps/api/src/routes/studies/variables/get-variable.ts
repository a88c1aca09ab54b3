import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, readStudyVariable } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentStudyVariable, studyVariableSchema } from "../../../presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { variableParams } from "./variable-params";

const route = createRoute({
  method: "get",
  path: "/{key}",
  tags: ["study-variables"],
  summary: "One study variable",
  description:
    "Its type, its value as the rules read it (dates as Unix seconds) and when it last changed. " +
    "Requires `manage-study-variables`.",
  security: MANAGEMENT_SECURITY,
  request: { params: variableParams },
  responses: {
    200: jsonContent(z.object({ variable: studyVariableSchema }), "the variable"),
    ...errorResponses([400, 401, 403, 404], { 404: "study or variable not found" }),
  },
});

export function registerGetVariable(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey, key } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "manage-study-variables");
    return c.json({ variable: presentStudyVariable(await readStudyVariable(db, studyKey, key)) }, 200);
  });
}
