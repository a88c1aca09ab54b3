import { z } from "@hono/zod-openapi";
import { accountDeletionProgress } from "@studyflow/domain/participant-accounts";
import {
  accountDeletionProgressSchema,
  presentAccountDeletionProgress,
} from "@studyflow/presenters/participant-account";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";

export function registerGetAccountDeletion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{deletionId}",
      tags: ["participant-users"],
      summary: "One account deletion and its progress",
      description: "Participants taken out of how many; `done` once the account is gone. Admin only.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({
          deletionId: z.uuid("deletionId must be a UUID").openapi({ param: { name: "deletionId", in: "path" } }),
        }),
      },
      responses: {
        200: jsonContent(z.object({ deletion: accountDeletionProgressSchema }), "the deletion"),
        ...errorResponses([400, 401, 403, 404]),
      },
    },
    async (c) => {
      const { deletionId } = c.req.valid("param");
      return c.json({ deletion: presentAccountDeletionProgress(await accountDeletionProgress(db, deletionId)) }, 200);
    },
  );
}
