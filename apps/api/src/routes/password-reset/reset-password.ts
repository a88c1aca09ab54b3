import { z } from "@hono/zod-openapi";
import { PASSWORD_RULE_DESCRIPTION, hashResetToken, resetPassword } from "@studyflow/domain/participant-accounts";
import { addressKeys } from "../../client-address";
import type { AppDeps } from "../../deps";
import { rateLimit, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent, messageSchema } from "../schemas";

/**
 * Guessing a 256-bit token is hopeless anyway; these limits stop a client from hammering the
 * endpoint (each good-token attempt costs an argon2 hash) and cap the tries on one token.
 * 20 per 15 minutes leaves room for a household behind one address.
 */
const RESET_WINDOW_SECONDS = 15 * 60;
const RESET_ATTEMPTS_PER_ADDRESS = 20;
const RESET_ATTEMPTS_PER_TOKEN = 5;

const resetRequest = z
  .object({
    token: z.string().min(1).openapi({ description: "The token from the reset link." }),
    newPassword: z.string().min(1).openapi({
      description: PASSWORD_RULE_DESCRIPTION,
    }),
  })
  .openapi("PasswordResetRequest");

/** Counted before the handler, so a refused attempt touches no table; per address first, then per token. */
function resetLimits(limiter: RateLimiter) {
  const shared = {
    windowSeconds: RESET_WINDOW_SECONDS,
    count: "every-request",
    message: "too many password reset attempts; try again later",
    input: { json: resetRequest },
  } as const;
  return [
    rateLimit(limiter, {
      ...shared,
      name: "password-reset:reset:address",
      limit: RESET_ATTEMPTS_PER_ADDRESS,
      keys: (c) => addressKeys(c),
    }),
    rateLimit(limiter, {
      ...shared,
      name: "password-reset:reset:token",
      limit: RESET_ATTEMPTS_PER_TOKEN,
      // Keyed by the hash: plain tokens never reach Redis either.
      keys: (_c, { token }) => [hashResetToken(token)],
    }),
  ];
}

export function registerResetPassword(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "post",
      path: "/reset",
      tags: ["password reset"],
      summary: "Set a new password with a reset token",
      description:
        "Consumes the single-use token from the reset e-mail and sets the new password. Every participant " +
        "session ends (refresh tokens and access tokens issued before stop working at once), the address counts as " +
        "confirmed, and the account can sign in with the new password. A rejected password leaves the token usable.",
      caseBody: resetRequest,
      bodyDescription: "The token from the reset link and the new password",
      afterBody: [...resetLimits(limiter)],
      responses: {
        200: jsonContent(messageSchema, "the password is changed"),
        ...errorResponses([400, 413, 429, 500], {
          400: "invalid request body; an unknown, expired or used token (one message for all); or a password that breaks the rule",
          429: "too many attempts from this address or with this token",
        }),
      },
    },
    async (c) => {
      const { token, newPassword } = c.req.valid("json");
      await resetPassword(deps.database.db, { token, newPassword, now: new Date(clock()) });
      return c.json({ message: "password reset successful" }, 200);
    },
  );
}
