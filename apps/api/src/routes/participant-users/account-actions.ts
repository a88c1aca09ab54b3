import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { lockParticipantAccount, signOutParticipantAccount, unlockParticipantAccount } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAccountSchema, presentParticipantAccount } from "@studyflow/presenters/participant-account";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import { userIdParam } from "./schemas";

const accountAnswer = jsonContent(z.object({ account: participantAccountSchema }), "the account as it is now");

const lockRoute = createRoute({
  method: "post",
  path: "/{id}/lock",
  tags: ["participant-users"],
  summary: "Lock a participant account",
  description:
    "No sign-in and no token renewal until unlocked; every session ends now, access tokens too. Audited " +
    "(`participant-user.lock`). Admin only.",
  security: MANAGEMENT_SECURITY,
  request: { params: userIdParam },
  responses: { 200: accountAnswer, ...errorResponses([401, 403, 404]) },
});

const unlockRoute = createRoute({
  method: "post",
  path: "/{id}/unlock",
  tags: ["participant-users"],
  summary: "Unlock a participant account",
  description: "The account can sign in again. Audited (`participant-user.unlock`). Admin only.",
  security: MANAGEMENT_SECURITY,
  request: { params: userIdParam },
  responses: {
    200: accountAnswer,
    ...errorResponses([401, 403, 404, 409], { 409: "the account is being deleted" }),
  },
});

const signOutRoute = createRoute({
  method: "post",
  path: "/{id}/sign-out",
  tags: ["participant-users"],
  summary: "Sign a participant account out everywhere",
  description:
    "Every session and every access token of the account stops working now; the participant can sign in " +
    "again. Audited (`participant-user.sign-out`). Admin only.",
  security: MANAGEMENT_SECURITY,
  request: { params: userIdParam },
  responses: {
    200: jsonContent(z.object({ sessionsEnded: z.number().int() }), "how many open sessions ended"),
    ...errorResponses([401, 403, 404]),
  },
});

export function registerAccountActions(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const actionOf = (id: string, subject: string) => ({
    userId: id,
    operator: subject,
    now: new Date((deps.clock ?? Date.now)()),
  });
  router.openapi(lockRoute, async (c) => {
    const account = await lockParticipantAccount(db, actionOf(c.req.valid("param").id, managementOf(c).subject));
    return c.json({ account: presentParticipantAccount(account) }, 200);
  });
  router.openapi(unlockRoute, async (c) => {
    const account = await unlockParticipantAccount(db, actionOf(c.req.valid("param").id, managementOf(c).subject));
    return c.json({ account: presentParticipantAccount(account) }, 200);
  });
  router.openapi(signOutRoute, async (c) => {
    const sessionsEnded = await signOutParticipantAccount(
      db,
      actionOf(c.req.valid("param").id, managementOf(c).subject),
    );
    return c.json({ sessionsEnded }, 200);
  });
}
