import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyVariables } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyVariable, studyVariableSchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { READ_VARIABLES } from "./variable-params";

export function registerListVariables(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      bothSlashes: true,
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
