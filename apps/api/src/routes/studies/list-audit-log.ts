import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listAuditLog } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { auditEntrySchema, presentAuditEntry } from "@studyflow/presenters/study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";
import { nextCursorField, pageQuery } from "./page-query";

export function registerListAuditLog(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/audit-log",
      tags: ["audit-log"],
      summary: "Who changed what in a study's configuration, and when; newest first",
      description:
        "Every management change: properties, status and rule settings (`study.*.update`), code lists " +
        "(`code-list.add` with counts, `code-list.remove` with the code), study variables (`variable.define`, " +
        "`variable.set`, `variable.delete` with the values), rules versions (`rules.set`) and whatever else records " +
        "itself there. Pages with `limit` and `cursor`. Requires `read-audit-log`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, query: pageQuery },
      responses: {
        200: jsonContent(
          z.object({ entries: z.array(auditEntrySchema), nextCursor: nextCursorField }),
          "a page of audit entries",
        ),
        ...errorResponses([400, 401, 403, 404], { 400: "bad limit or cursor", 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "read-audit-log");
      const page = await listAuditLog(db, studyKey, { limit, ...(cursor === undefined ? {} : { cursor }) });
      return c.json({ entries: page.items.map(presentAuditEntry), nextCursor: page.nextCursor }, 200);
    },
  );
}
