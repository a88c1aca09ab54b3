import { z } from "@hono/zod-openapi";
import { getParticipantAccount, requestAccountDeletion } from "@studyflow/domain/participant-accounts";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { accountDeletionSchema, presentAccountDeletion } from "@studyflow/presenters/participant-account";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { queueDeletionJob } from "./deletion-queue";
import { userIdParam } from "./account-schemas";

export function registerDeleteParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{id}",
      tags: ["participant-users"],
      summary: "Delete a participant account",
      description:
        "The same deletion a participant asks for with DELETE /v1/user: the account is signed out everywhere at " +
        "once, then the deletion task takes every participant of every profile out of every study through its " +
        "LEAVE rules (status `accountDeleted`, confidential responses removed) and removes the account. Answers " +
        "202 with the deletion, whose progress GET /v1/participant-users/deletions/{id} shows; asking again answers " +
        "the same deletion. Audited (`participant-user.delete-request`, then `participant-user.delete` by the task). " +
        "Admin only.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        202: jsonContent(z.object({ deletion: accountDeletionSchema }), "the deletion, queued"),
        ...errorResponses([401, 403, 404], { 404: "no such account (or it was deleted)" }),
      },
    },
    async (c) => {
      const { id } = c.req.valid("param");
      // NotFound for a malformed id too, before the transaction
      await getParticipantAccount(db, id);
      const { deletion } = await requestAccountDeletion(db, {
        userId: id,
        now: new Date(deps.clock()),
        operator: managementOf(c).subject,
      });
      await queueDeletionJob(deps, deletion.id);
      return c.json({ deletion: presentAccountDeletion(deletion) }, 202);
    },
  );
}
