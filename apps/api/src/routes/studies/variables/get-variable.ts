import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { readStudyVariable } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { presentStudyVariable, studyVariableSchema } from "@studyflow/presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { READ_VARIABLES, variableParams } from "./variable-params";

export function registerGetVariable(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{key}",
      bothSlashes: true,
      tags: ["study-variables"],
      summary: "One study variable (CASE)",
      description:
        "Its type, value (dates as RFC 3339), description and when it last changed. Requires " +
        "`read-study-config` or `manage-study-variables`. An unknown variable is 404 (case-backend: 500).",
      security: MANAGEMENT_SECURITY,
      request: { params: variableParams },
      responses: {
        200: jsonContent(z.object({ variable: studyVariableSchema }), "the variable"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or variable not found" }),
      },
    },
    async (c) => {
      const { studyKey, key } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_VARIABLES);
      return c.json({ variable: presentStudyVariable(studyKey, await readStudyVariable(db, studyKey, key)) }, 200);
    },
  );
}
