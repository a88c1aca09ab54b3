import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { accountDeletionProgress, listAccountDeletions, type AccountDeletionStatus } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import {
  accountDeletionProgressSchema,
  accountDeletionSchema,
  presentAccountDeletion,
  presentAccountDeletionProgress,
} from "@studyflow/presenters/participant-account";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";

const STATUSES = ["pending", "running", "failed", "done"] as const satisfies readonly AccountDeletionStatus[];

const listRoute = createRoute({
  method: "get",
  path: "/deletions",
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
});

const getRoute = createRoute({
  method: "get",
  path: "/deletions/{deletionId}",
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
});

export function registerAccountDeletions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(listRoute, async (c) => {
    const { status, limit } = c.req.valid("query");
    const rows = await listAccountDeletions(db, {
      statuses: status ? [status] : ["pending", "running", "failed"],
      limit,
    });
    return c.json({ deletions: rows.map(presentAccountDeletion) }, 200);
  });
  router.openapi(getRoute, async (c) => {
    const { deletionId } = c.req.valid("param");
    return c.json({ deletion: presentAccountDeletionProgress(await accountDeletionProgress(db, deletionId)) }, 200);
  });
}
