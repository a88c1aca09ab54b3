import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteStudy, removeStudyFiles } from "@studyflow/domain/studies";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

export function registerDeleteStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{studyKey}",
      tags: ["studies"],
      summary: "Delete a study and everything it holds (CASE)",
      description:
        "case-backend's `DELETE /v1/studies/{studyKey}`: no body (case-admin's dialog has the user type the key). " +
        "One transaction removes the study with its participants, responses, reports, surveys, rules, files, " +
        "tasks, code lists, counters, variables, templates, subscriptions, timers and scheduled e-mails, the " +
        "permissions for the study and the messages to its participants not sent yet: all or nothing. The audit " +
        "log keeps its entries and records `study.delete` with counts. Requires `delete-study`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(
          z.object({
            message: z.string(),
            removed: z.object({
              participants: z.number().int(),
              responses: z.number().int(),
              permissions: z.number().int(),
              pendingMessages: z.number().int(),
            }),
          }),
          "the study is gone",
        ),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "delete-study");
      const deleted = await deleteStudy(db, studyKey, who.subject);
      await removeStudyFiles(db, deps.fileStore, deleted.files);
      return c.json({ message: "study deleted", removed: deleted.removed }, 200);
    },
  );
}
