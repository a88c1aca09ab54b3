import { assertStudyPermission } from "@studyflow/domain/access";
import { updateStudyVariableValue } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { variableValueBody } from "./variable-bodies";
import { variableParams } from "./variable-params";

export function registerSetVariableValue(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{key}/value",
      bothSlashes: true,
      tags: ["study-variables"],
      summary: "Set a study variable's value (CASE)",
      description:
        "A value of the variable's type, read as case-backend reads it (int, float and boolean also as strings; a " +
        "date as RFC 3339 or Unix seconds or milliseconds) and checked as the rules read it; a value of another " +
        "type is 400 (case-backend may store it). Recorded in the audit log (`variable.set`, with the value " +
        "before). Requires `manage-study-variables`.",
      security: MANAGEMENT_SECURITY,
      request: { params: variableParams },
      caseBody: variableValueBody,
      responses: {
        200: jsonContent(messageSchema, "value updated"),
        ...errorResponses([400, 401, 403, 404], {
          400: "no value, or one not of the variable's type (the message names the field)",
          404: "study or variable not found",
        }),
      },
    },
    async (c) => {
      const { studyKey, key } = c.req.valid("param");
      const { variable } = c.req.valid("json");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-variables");
      await updateStudyVariableValue(db, studyKey, key, variable, who.subject, deps);
      return c.json({ message: "study variable value updated" }, 200);
    },
  );
}
