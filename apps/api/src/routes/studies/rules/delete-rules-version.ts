import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteRulesVersion } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { rulesVersionIdParams } from "./rules-version-id";

export function registerDeleteRulesVersion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/versions/{id}",
      bothSlashes: true,
      tags: ["rules"],
      summary: "Delete one rules version",
      description:
        "Deleting the current (highest) version makes the one before it current: the next participant event " +
        "runs it. A version that an unfinished timer task runs is kept (409). Audited as `rules.delete`. " +
        "Requires `update-study-rules` (or `manage-rules`).",
      security: MANAGEMENT_SECURITY,
      request: { params: rulesVersionIdParams },
      responses: {
        200: jsonContent(
          z.object({
            message: z.string().openapi({ example: "study rule version deleted" }),
            currentVersion: z
              .number()
              .int()
              .nullable()
              .openapi({ description: "the study's current rules version now; null when none is left" }),
          }),
          "the version is deleted",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          404: "study or version not found",
          409: "an unfinished timer task runs this version",
        }),
      },
    },
    async (c) => {
      const { studyKey, id } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-rules");
      const deleted = await deleteRulesVersion(db, { studyKey, version: Number(id), actor: who.subject });
      return c.json({ message: "study rule version deleted", currentVersion: deleted.currentVersion }, 200);
    },
  );
}
