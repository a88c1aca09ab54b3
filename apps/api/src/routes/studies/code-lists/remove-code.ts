import { assertStudyPermission } from "@studyflow/domain/access";
import { removeStudyCode } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { codeParams } from "./code-list-params";

export function registerRemoveCode(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{listKey}/codes/{code}",
      tags: ["code-lists"],
      summary: "Remove one code from a study code list",
      description:
        "Recorded in the audit log (`code-list.remove`, with the code). A code with '/', '?', '#' or spaces is " +
        "percent-encoded in the path. Requires `manage-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: codeParams },
      responses: {
        204: { description: "code removed" },
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or the list does not hold the code" }),
      },
    },
    async (c) => {
      const { studyKey, listKey, code } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-code-lists");
      await removeStudyCode(db, studyKey, listKey, code, who.subject);
      return c.body(null, 204);
    },
  );
}
