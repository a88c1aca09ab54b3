import { assertStudyPermission } from "@studyflow/domain/access";
import { updateStudyVariableDescription } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { describeVariableBody } from "./variable-bodies";
import { variableParams } from "./variable-params";

export function registerDescribeVariable(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{key}",
      bothSlashes: true,
      tags: ["study-variables"],
      summary: "Describe a study variable (CASE)",
      description:
        "Replaces its label, description, uiType, uiPriority and configs (absent ones become empty, as in " +
        "case-backend); its key, type and value stay (set the value with PUT …/value). Recorded in the audit log " +
        "(`variable.describe`). Requires `manage-study-variables`.",
      security: MANAGEMENT_SECURITY,
      request: { params: variableParams },
      caseBody: describeVariableBody,
      responses: {
        200: jsonContent(messageSchema, "description updated"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or variable not found" }),
      },
    },
    async (c) => {
      const { studyKey, key } = c.req.valid("param");
      const { variableDef } = c.req.valid("json");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-variables");
      await updateStudyVariableDescription(db, studyKey, key, variableDef, who.subject, deps);
      return c.json({ message: "study variable definition updated" }, 200);
    },
  );
}
