import { z } from "@hono/zod-openapi";
import { verifyEmailToken, type VerifiedAddress } from "@studyflow/domain/participant-sign-in";
import type { AppDeps } from "../../deps";
import { limitMailedTokenFailures } from "../../middleware/mailed-token-limit";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";

const verifyRequest = z
  .object({ token: z.string().max(200, "longer than 200 characters") })
  .openapi("CaseVerifyEmailRequest");

/**
 * What verify-email answers: the part of CASE's `{user}` that says what the link confirmed. The
 * tekenradar app reads nothing of it (only that the status is 200), and whoever holds a link is not
 * signed in: the account's id, profiles, contact infos and preferences stay out of it.
 */
const verifiedAnswer = z
  .object({
    user: z.object({
      account: z.object({
        type: z.literal("email"),
        accountID: z.string().openapi({ description: "the address the link confirmed (the sign-in address now)" }),
        accountConfirmedAt: z.number().int().openapi({ description: "Unix seconds" }),
      }),
    }),
  })
  .openapi("CaseVerifyEmailAnswer");

const presentVerified = (verified: VerifiedAddress) => ({
  user: {
    account: {
      type: "email" as const,
      accountID: verified.email,
      accountConfirmedAt: Math.floor(verified.accountConfirmedAt.getTime() / 1000),
    },
  },
});

export function registerVerifyEmail(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const { clock } = deps;
  const guesses = limitMailedTokenFailures(
    limiter,
    "auth:verify-email:address",
    "too many invalid tokens; try again later",
  );
  defineRoute(
    router,
    {
      method: "post",
      path: "/verify-email",
      tags: ["participant auth"],
      summary: "Confirm an address with a mailed token",
      description:
        "case-backend's verifyEmail. A verify-email token confirms the account's address. A change-email token " +
        "(from POST /v1/user/change-account-email) makes its new address the sign-in address if no other account " +
        "took it meanwhile, confirmed; every session of the account ends and the old address is told. A link confirms " +
        "once: used, retired (a password reset or change retires every open link), expired and unknown tokens all " +
        "answer the same 401 (case-backend: 400, and a used link again 200). A used verify-email link still signs in " +
        "through login-with-temptoken for an hour (the app does so right after). The answer holds only " +
        "`user.account` (type, the confirmed address, accountConfirmedAt), not the whole user: the holder of a link " +
        "is not signed in.",
      middleware: [guesses],
      caseBody: verifyRequest,
      bodyDescription: "The token from the mailed link",
      responses: {
        200: jsonContent(verifiedAnswer, "confirmed"),
        ...errorResponses([400, 401, 429], { 401: "invalid or expired verification token" }),
      },
    },
    async (c) => {
      const verified = await verifyEmailToken(db, c.req.valid("json").token, new Date(clock()));
      return c.json(presentVerified(verified), 200);
    },
  );
}
