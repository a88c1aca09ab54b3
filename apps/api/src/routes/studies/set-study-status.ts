import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { STUDY_STATUSES, updateStudy } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

export function registerSetStudyStatus(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/status",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Set a study's status (CASE)",
      description:
        "`active` or `inactive` (case-backend takes any text; studyflow refuses others). Inactive: participant " +
        "events answer 409, as `PATCH /v1/studies/{studyKey}` with `status` describes. Audited " +
        "(`study.status.update`). Requires `update-study-status` (`update-study-props` also grants it).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({ status: z.enum(STUDY_STATUSES, { error: "status: must be active or inactive" }) }),
      responses: {
        200: jsonContent(messageSchema, "the status is set"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-status");
      const { status } = c.req.valid("json");
      await updateStudy(db, studyKey, { status }, who.subject, deps);
      return c.json({ message: "study status updated" }, 200);
    },
  );
}
