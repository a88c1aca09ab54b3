import { z } from "@hono/zod-openapi";
import { listAccountDeletions, type AccountDeletionStatus } from "@studyflow/domain/participant-accounts";
import { accountDeletionSchema, presentAccountDeletion } from "@studyflow/presenters/participant-account";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";

const STATUSES = ["pending", "running", "failed", "done"] as const satisfies readonly AccountDeletionStatus[];

export function registerListAccountDeletions(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["participant-users"],
      summary: "Account deletions by status",
      description:
        "Deletions under way and failed ones (default: every status but done), oldest first, with their error. " +
        "Rows hold no personal data: the account id only. A failed deletion is retried by the workers. Admin only.",
      security: MANAGEMENT_SECURITY,
      request: {
        query: z.object({
          status: z
            .enum(STATUSES)
            .optional()
            .openapi({ param: { name: "status", in: "query" }, description: "only deletions of this status" }),
          limit: z.coerce
            .number()
            .int()
            .min(1)
            .max(500)
            .default(100)
            .openapi({ param: { name: "limit", in: "query" } }),
        }),
      },
      responses: {
        200: jsonContent(z.object({ deletions: z.array(accountDeletionSchema) }), "the deletions"),
        ...errorResponses([400, 401, 403]),
      },
    },
    async (c) => {
      const { status, limit } = c.req.valid("query");
      const rows = await listAccountDeletions(db, {
        statuses: status ? [status] : ["pending", "running", "failed"],
        limit,
      });
      return c.json({ deletions: rows.map(presentAccountDeletion) }, 200);
    },
  );
}
