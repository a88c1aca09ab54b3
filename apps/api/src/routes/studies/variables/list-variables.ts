import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, listStudyVariables } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import { caseRoute } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import { presentStudyVariable, studyVariableSchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { READ_VARIABLES } from "./variable-params";

export function registerListVariables(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  caseRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["study-variables"],
      summary: "A study's variables with their types, values and descriptions (CASE)",
      description: "By key. Requires `read-study-config` or `manage-study-variables`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ variables: z.array(studyVariableSchema) }), "the study's variables"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_VARIABLES);
      const variables = await listStudyVariables(db, studyKey);
      return c.json({ variables: variables.map((variable) => presentStudyVariable(studyKey, variable)) }, 200);
    },
  );
}
