import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { deleteExplorerResponse, type ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";

export function registerDeleteResponse(router: ApiRouter, deps: AppDeps, cache: ExplorerPageCache) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/responses/{responseID}",
      tags: ["data-explorer"],
      summary: "Delete one survey response",
      description: "Recorded in the audit log (`response.delete`). Requires `delete-responses`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField, responseID: idParam("responseID") }) },
      responses: {
        200: jsonContent(messageSchema, "response deleted"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or no such response in it" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, responseID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "delete-responses");
      await deleteExplorerResponse(db, studyKey, responseID, who.subject, cache);
      return c.json({ message: "study response deleted" }, 200);
    },
  );
}
