import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteStudyVariable } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { successSchema, variableParams } from "./variable-params";

export function registerDeleteVariable(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{key}",
      bothSlashes: true,
      tags: ["study-variables"],
      summary: "Delete a study variable (CASE)",
      description:
        "Rules that read or update it fail from then on (recorded as rule failures). Recorded in the audit log " +
        "(`variable.delete`, with its last value). Requires `manage-study-variables`.",
      security: MANAGEMENT_SECURITY,
      request: { params: variableParams },
      responses: {
        200: jsonContent(successSchema, "variable deleted"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or variable not found" }),
      },
    },
    async (c) => {
      const { studyKey, key } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-variables");
      await deleteStudyVariable(db, studyKey, key, who.subject);
      return c.json({ success: true as const }, 200);
    },
  );
}
