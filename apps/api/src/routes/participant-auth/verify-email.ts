import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { loadCaseUser, resendEmailVerification, verifyEmailToken } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import { limitMailedTokenFailures } from "../../middleware/mailed-token-limit";
import type { RateLimiter } from "../../rate-limit";
import { userEnvelope } from "../user/case-user-schema";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

const verifyRequest = z
  .object({ token: z.string().max(200, "longer than 200 characters") })
  .openapi("CaseVerifyEmailRequest");
const verifyBody = caseJsonBody(verifyRequest, "The token from the mailed link");

const verifyRoute = createRoute({
  method: "post",
  path: "/verify-email",
  tags: ["participant auth"],
  summary: "Confirm an address with a mailed token",
  description:
    "case-backend's verifyEmail. A verify-email token confirms the account's address. A change-email token " +
    "(from POST /v1/user/change-account-email) makes its new address the sign-in address if no other account " +
    "took it meanwhile, confirmed; every session of the account ends and the old address is told. Change-email tokens are " +
    "single use; a verify-email token stays usable for an hour after (as in case-backend: the app signs in with it " +
    "through login-with-temptoken). Unknown, used and expired tokens answer 401 (case-backend: 400).",
  middleware: [verifyBody.middleware],
  request: { body: verifyBody.body },
  responses: {
    200: jsonContent(userEnvelope, "confirmed"),
    ...errorResponses([400, 401, 429], { 401: "invalid or expired verification token" }),
  },
});

const resendRequest = z.object({ email: z.string().trim().max(254) }).openapi("CaseResendVerificationRequest");
const resendBody = caseJsonBody(resendRequest, "The account's address");

const resendRoute = createRoute({
  method: "post",
  path: "/resend-email-verification",
  tags: ["participant auth"],
  summary: "Mail the verify-email link again",
  description:
    "case-backend's resendEmailVerification: a new link to the account's address (earlier links end); at most " +
    "one per minute (429 with Retry-After).",
  security: PARTICIPANT_SECURITY,
  middleware: [resendBody.middleware],
  request: { body: resendBody.body },
  responses: {
    200: jsonContent(messageSchema, "sending"),
    ...errorResponses([400, 401, 429], { 400: "email is not the account's address" }),
  },
});

export function registerVerifyEmail(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const clock = deps.clock ?? Date.now;
  const guesses = limitMailedTokenFailures(
    limiter,
    "auth:verify-email:address",
    "too many invalid tokens; try again later",
  );
  router.openapi({ ...verifyRoute, middleware: [guesses, verifyBody.middleware] }, async (c) => {
    const userId = await verifyEmailToken(db, c.req.valid("json").token, new Date(clock()));
    return c.json({ user: await loadCaseUser(db, userId) }, 200);
  });
  router.openapi({ ...resendRoute, middleware: [participantAuth(deps), resendBody.middleware] }, async (c) => {
    await resendEmailVerification(db, {
      userId: participantOf(c).userId,
      email: c.req.valid("json").email,
      now: new Date(clock()),
      url: deps.config.VERIFY_EMAIL_URL,
      ttlSeconds: deps.config.VERIFY_EMAIL_TOKEN_TTL_SECONDS,
    });
    return c.json({ message: "email sending initiated" }, 200);
  });
}
