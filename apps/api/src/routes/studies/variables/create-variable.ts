import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { createStudyVariable } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { createVariableBody } from "./variable-bodies";

export function registerCreateVariable(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      bothSlashes: true,
      tags: ["study-variables"],
      summary: "Define a study variable (CASE)",
      description:
        "Its key, type (string, int, float, boolean, date), description and perhaps a value, read as case-backend " +
        "reads it (int, float and boolean also as strings; a date as RFC 3339 or Unix seconds or milliseconds) and " +
        "checked as the rules read it; no value: the type's zero. Recorded in the audit log (`variable.define`). " +
        "Requires `manage-study-variables`. A key in use is 409 (case-backend: 500).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: createVariableBody,
      responses: {
        200: jsonContent(z.object({ id: z.string() }), "the variable's id (its key)"),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "no key or type, or a value not of the type (the message names the field)",
          404: "study not found",
          409: "the study has a variable of that key",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { variableDef } = c.req.valid("json");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-variables");
      const variable = await createStudyVariable(db, studyKey, variableDef, who.subject);
      return c.json({ id: variable.key }, 200);
    },
  );
}
