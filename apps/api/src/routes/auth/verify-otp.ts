import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { issueSessionTokens } from "@studyflow/domain/participant-sessions";
import { tryAgainIn, verifyEmailOtp } from "@studyflow/domain/participant-sign-in";
import { participantOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { failureRateLimits, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { sessionTokenSettings } from "./participant-session-settings";
import { tokenEnvelope, tokenEnvelopeSchema } from "./token-envelope";

const verifyRequest = z
  .object({ code: z.string().max(20, "longer than 20 characters") })
  .openapi("CaseOtpVerifyRequest");

/**
 * Ceilings on wrong codes per account over longer spans than the domain's exact budget (5 in 15
 * minutes, counted in the account's transaction): over an hour and a day, an attacker who has the
 * password gets at most 10 and 30 guesses, each against at most 10 open codes.
 */
const WRONG_CODE_TIERS = [
  { name: "auth:otp-verify:account", limit: 10, windowSeconds: 60 * 60 },
  { name: "auth:otp-verify:account-day", limit: 30, windowSeconds: 24 * 60 * 60 },
] as const;

/** `auth`: the participant auth the OTP routes share (see index.ts). */
export function registerVerifyOtp(
  router: ApiRouter,
  deps: AppDeps,
  limiter: RateLimiter,
  auth: MiddlewareHandler<AppEnv>,
) {
  const db = deps.database.db;
  const { clock } = deps;
  const wrongCodes = failureRateLimits(
    limiter,
    WRONG_CODE_TIERS.map((tier) => ({
      ...tier,
      count: { failures: [401] },
      message: (retryAfterSeconds: number) => `too many wrong codes: ${tryAgainIn(retryAfterSeconds)}`,
      keys: (c: Context<AppEnv>) => [participantOf(c).userId],
    })),
  );
  defineRoute(
    router,
    {
      method: "post",
      path: "/otp/verify",
      tags: ["participant auth"],
      summary: "Verify a one-time code",
      description:
        "case-backend's verifyOTP: a right code answers a new token pair of the same session with `lastOTP.email` = " +
        "now (the participant app asks for one younger than 24 h), and confirms the account's address if it was not " +
        "yet (the code proves the mailbox). Any open code of the account is taken, and a right one spends them all. " +
        "Wrong codes count per account over all its codes: the 5th within 15 minutes ends every open code, and until " +
        "the oldest of those 5 is 15 minutes old the check answers 429 with Retry-After (as does an 11th wrong code " +
        "in an hour or a 31st in a day). Wrong, expired and ended codes answer the same 401.",
      security: PARTICIPANT_SECURITY,
      middleware: [auth],
      caseBody: verifyRequest,
      bodyDescription: "The code from the mail",
      afterBody: [wrongCodes],
      responses: {
        200: jsonContent(tokenEnvelopeSchema, "verified"),
        ...errorResponses([400, 401, 429], {
          401: "invalid or expired code; or no valid access token",
          429: "too many wrong codes",
        }),
      },
    },
    async (c) => {
      const { userId, sessionId } = participantOf(c);
      const now = new Date(clock());
      await verifyEmailOtp(db, { userId, code: c.req.valid("json").code, now });
      const tokens = await issueSessionTokens(db, {
        userId,
        now,
        settings: sessionTokenSettings(deps.config),
        lastEmailOtpAt: now,
        identityProvenAt: now,
        ...(sessionId ? { sessionId } : {}),
      });
      return c.json(await tokenEnvelope(db, tokens), 200);
    },
  );
}
