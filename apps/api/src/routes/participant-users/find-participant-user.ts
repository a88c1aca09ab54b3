import { z } from "@hono/zod-openapi";
import { findParticipantAccountByEmail } from "@studyflow/domain/participant-accounts";
import { participantAccountSchema, presentParticipantAccount } from "@studyflow/presenters/participant-account";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";

export function registerFindParticipantUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["participant-users"],
      summary: "Find a participant account by e-mail",
      description:
        "The account's id, when it was created, confirmed, locked and last signed into, its number of profiles and " +
        "its deletion (if one was requested), never a password hash or a token. Admin only.",
      security: MANAGEMENT_SECURITY,
      request: {
        query: z.object({
          email: z
            .string()
            .min(1, "email: required")
            .max(320, "email is longer than 320 characters")
            .openapi({ param: { name: "email", in: "query" }, example: "someone@example.org" }),
        }),
      },
      responses: {
        200: jsonContent(z.object({ account: participantAccountSchema }), "the account"),
        ...errorResponses([400, 401, 403, 404], { 404: "no account with this e-mail" }),
      },
    },
    async (c) => {
      const { email } = c.req.valid("query");
      return c.json({ account: presentParticipantAccount(await findParticipantAccountByEmail(db, email)) }, 200);
    },
  );
}
