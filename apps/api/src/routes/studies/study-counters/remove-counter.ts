import { assertStudyPermission } from "@studyflow/domain/access";
import { removeStudyCounter } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { successSchema } from "../variables/variable-params";
import { counterParams } from "./counter-params";

export function registerRemoveCounter(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{scope}",
      bothSlashes: true,
      tags: ["study-counters"],
      summary: "Remove a study counter (CASE)",
      description:
        "Recorded in the audit log (`study-counter.remove`, with its last value). A counter that does not exist is " +
        "404 (case-backend answers 200). Requires `manage-study-counters`.",
      security: MANAGEMENT_SECURITY,
      request: { params: counterParams },
      responses: {
        200: jsonContent(successSchema, "removed"),
        ...errorResponses([400, 401, 403, 404], { 404: "study or counter not found" }),
      },
    },
    async (c) => {
      const { studyKey, scope } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-counters");
      await removeStudyCounter(db, studyKey, scope, who.subject);
      return c.json({ success: true as const }, 200);
    },
  );
}
