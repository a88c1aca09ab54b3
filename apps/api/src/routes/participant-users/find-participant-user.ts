import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { findParticipantAccountByEmail, getParticipantAccount } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAccountSchema, presentParticipantAccount } from "@studyflow/presenters/participant-account";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { userIdParam } from "./schemas";

const findRoute = createRoute({
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
});

const getRoute = createRoute({
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
});

export function registerFindParticipantUser(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(findRoute, async (c) => {
    const { email } = c.req.valid("query");
    return c.json({ account: presentParticipantAccount(await findParticipantAccountByEmail(db, email)) }, 200);
  });
  router.openapi(getRoute, async (c) => {
    const { id } = c.req.valid("param");
    return c.json({ account: presentParticipantAccount(await getParticipantAccount(db, id)) }, 200);
  });
}
