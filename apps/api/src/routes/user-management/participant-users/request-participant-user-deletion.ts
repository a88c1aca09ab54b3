import { z } from "@hono/zod-openapi";
import { assertPermission } from "@studyflow/domain/access";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import { findParticipantAccountByEmail, requestAccountDeletion } from "@studyflow/domain/participant-accounts";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { accountDeletionSchema, presentAccountDeletion } from "@studyflow/presenters/participant-account";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { queueDeletionJob } from "../../participant-users/deletion-queue";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema } from "../../schemas";
import { TAGS, now } from "../user-management-contract";

/** POST /participant-users/request-deletion: case-admin's "delete participant user" by e-mail address. */
export function registerRequestParticipantUserDeletion(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/request-deletion",
      tags: TAGS,
      summary: "Delete a participant account by e-mail address (CASE)",
      description:
        "Needs permission `users` / `*` / `delete-users`. Starts the same deletion as DELETE " +
        "/v1/participant-users/{id} (signed out at once; the deletion task takes the account's participants out " +
        "of every study and removes it) and answers 200 `user deleted` with the deletion as an extra; " +
        "case-backend deletes at once. No account with the address: 400 `user could not be deleted`, as " +
        "case-backend answers it. Audited.",
      security: MANAGEMENT_SECURITY,
      caseBody: z.object({ email: z.string().max(320) }),
      responses: {
        200: jsonContent(messageSchema.extend({ deletion: accountDeletionSchema }), "the deletion, started"),
        ...errorResponses([400, 401, 403], { 403: "the caller lacks users/*/delete-users" }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertPermission(db, who, { resourceType: "users", resourceKeys: ["*"], action: "delete-users" });
      const email = c.req.valid("json").email.trim();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new Invalid("email: not an e-mail address");
      let userId: string;
      try {
        userId = (await findParticipantAccountByEmail(db, email)).id;
      } catch (error) {
        if (error instanceof NotFound) throw new Invalid("user could not be deleted");
        throw error;
      }
      let requested;
      try {
        requested = await requestAccountDeletion(db, { userId, now: now(deps), operator: who.subject });
      } catch (error) {
        // deleted between the lookup and the request
        if (error instanceof NotFound) throw new Invalid("user could not be deleted");
        throw error;
      }
      await queueDeletionJob(deps, requested.deletion.id);
      return c.json({ message: "user deleted", deletion: presentAccountDeletion(requested.deletion) }, 200);
    },
  );
}
