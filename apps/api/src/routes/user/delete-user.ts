import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { assertRecentlyAuthenticated, requestAccountDeletion } from "@studyflow/domain/participant-accounts";
import { participantOf, type AppEnv } from "../../app-env";
import { replaceRequestJson, requestJson } from "../../request-json";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import { rateLimit, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { queueDeletionJob } from "../participant-users/deletion-queue";
import { PARTICIPANT_SECURITY, jsonContent, submittedResponseSchema } from "../schemas";

/** Wrong passwords sent to confirm a deletion: as many as a person mistyping, not a guesser. */
const PASSWORD_ATTEMPTS = { limit: 5, windowSeconds: 15 * 60 };

const deleteUserBody = z.object({
  exitSurveyResponse: submittedResponseSchema.nullish().openapi({
    description: "the app's exit survey, stored (without rules) in each study that has a survey of its key",
  }),
  password: z.string().max(1_024).optional().openapi({
    description:
      "the current password; needed only when the session's sign-in is older than the re-authentication window",
  }),
});

/** An empty DELETE body is `{}`: the CASE app always sends one, other clients may not. */
const emptyBodyIsEmptyObject = createMiddleware<AppEnv>(async (c, next) => {
  if ((await requestJson(c)).kind === "blank") {
    replaceRequestJson(c, {});
  }
  await next();
});

/** DELETE /v1/user: re-authenticated, then the durable deletion task (see the route's description). */
export function registerDeleteUser(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const auth = participantAuth(deps);
  // The user router may authenticate every route already; the token is verified once either way.
  const authOnce = createMiddleware<AppEnv>(async (c, next) => (c.get("participant") ? next() : auth(c, next)));
  const passwordAttempts = rateLimit(limiter, {
    name: "delete-user-password",
    ...PASSWORD_ATTEMPTS,
    keys: (c) => [`user:${participantOf(c).userId}`],
    count: { failures: [401] },
    message: "too many wrong passwords; sign in again instead",
  });
  const now = () => new Date(deps.clock());
  defineRoute(
    router,
    {
      method: "delete",
      path: "/",
      tags: ["user"],
      summary: "Delete the signed-in participant's account (case-backend's DELETE /v1/user)",
      description:
        "Needs a recent proof of identity: the token's session was signed into (password) or had an e-mail OTP " +
        "verified within ACCOUNT_DELETION_REAUTH_SECONDS (default 1 h), or the body carries the current `password`; " +
        "otherwise 401 asking to sign in again (case-backend asks for nothing more than a token). Then, in one " +
        "transaction, the account is marked for deletion, every session ends (this token too), and the deletion " +
        "task is recorded and queued: every participant of every profile leaves each study through its LEAVE " +
        "rules and ends as `accountDeleted` with its confidential responses removed, then the account is removed. " +
        "Answers 200 `{message}` as case-backend does once the deletion is under way; asking again while it runs " +
        "answers the same.",
      security: PARTICIPANT_SECURITY,
      middleware: [authOnce, passwordAttempts, emptyBodyIsEmptyObject],
      caseBody: deleteUserBody,
      bodyDescription: "optional: an empty body is `{}`",
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ message: z.string() }), "the deletion is under way"),
        ...errorResponses([400, 401, 404, 429], {
          401: "no valid token, or no recent sign-in and no (or a wrong) password",
          404: "the account no longer exists",
        }),
      },
    },
    async (c) => {
      const principal = participantOf(c);
      const body = c.req.valid("json");
      await assertRecentlyAuthenticated(deps.database.db, {
        userId: principal.userId,
        sessionId: principal.sessionId,
        password: body.password,
        now: now(),
        maxAgeSeconds: deps.config.ACCOUNT_DELETION_REAUTH_SECONDS,
      });
      const { deletion } = await requestAccountDeletion(deps.database.db, {
        userId: principal.userId,
        now: now(),
        ...(body.exitSurveyResponse ? { exitSurveyResponse: body.exitSurveyResponse } : {}),
      });
      await queueDeletionJob(deps, deletion.id);
      return c.json({ message: "user deleted" }, 200);
    },
  );
}
