import { z } from "@hono/zod-openapi";
import { getParticipantAccount } from "@studyflow/domain/participant-accounts";
import { participantAccountSchema, presentParticipantAccount } from "@studyflow/presenters/participant-account";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { userIdParam } from "./account-schemas";

export function registerGetParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{id}",
      tags: ["participant-users"],
      summary: "A participant account by id",
      description: "As the search by e-mail answers it. Admin only.",
      security: MANAGEMENT_SECURITY,
      request: { params: userIdParam },
      responses: {
        200: jsonContent(z.object({ account: participantAccountSchema }), "the account"),
        ...errorResponses([400, 401, 403, 404], { 404: "no such account (or it was deleted)" }),
      },
    },
    async (c) => {
      const { id } = c.req.valid("param");
      return c.json({ account: presentParticipantAccount(await getParticipantAccount(db, id)) }, 200);
    },
  );
}
