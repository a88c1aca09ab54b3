import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Invalid, issueSessionTokens, sendEmailOtp, tryAgainIn, verifyEmailOtp } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import { failureRateLimits, type RateLimiter } from "../../rate-limit";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";
import { tokenEnvelope, tokenEnvelopeSchema } from "./envelope";
import { sessionTokenSettings } from "./session-settings";

const requestRoute = createRoute({
  method: "get",
  path: "/otp",
  tags: ["participant auth"],
  summary: "E-mail a one-time code",
  description:
    "case-backend's requestOTP for type=email: a 6-digit code, valid 10 minutes, mailed through the outbox " +
    "and stored hashed; older codes keep working until they expire. A request within 30 s of the last code, " +
    "while that code is open, answers the same 200 and mails nothing (the participant app asks twice per " +
    "visit of its code page). At most 10 codes per account in 15 minutes; past that, and while the account's " +
    'wrong codes are used up, 429 with Retry-After and an error saying when to try again ("too many codes ' +
    'requested: try again in 7 minutes"), which the app shows on its code page. type=sms answers 400: ' +
    "studyflow has no SMS gateway.",
  security: PARTICIPANT_SECURITY,
  request: { query: z.object({ type: z.string().max(20).default("email") }) },
  responses: {
    200: jsonContent(messageSchema, "code sent"),
    ...errorResponses([400, 401, 429], {
      400: "type other than email",
      429: "too many codes requested, or too many wrong codes",
    }),
  },
});

const verifyRequest = z
  .object({ code: z.string().max(20, "longer than 20 characters") })
  .openapi("CaseOtpVerifyRequest");
const verifyBody = caseJsonBody(verifyRequest, "The code from the mail");

const verifyRoute = createRoute({
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
  middleware: [verifyBody.middleware],
  request: { body: verifyBody.body },
  responses: {
    200: jsonContent(tokenEnvelopeSchema, "verified"),
    ...errorResponses([400, 401, 429], {
      401: "invalid or expired code; or no valid access token",
      429: "too many wrong codes",
    }),
  },
});

/**
 * Ceilings on wrong codes per account over longer spans than the domain's exact budget (5 in 15
 * minutes, counted in the account's transaction): over an hour and a day, an attacker who has the
 * password gets at most 10 and 30 guesses, each against at most 10 open codes.
 */
const WRONG_CODE_TIERS = [
  { name: "auth:otp-verify:account", limit: 10, windowSeconds: 60 * 60 },
  { name: "auth:otp-verify:account-day", limit: 30, windowSeconds: 24 * 60 * 60 },
] as const;

export function registerOtp(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const clock = deps.clock ?? Date.now;
  const auth = participantAuth(deps);
  router.openapi({ ...requestRoute, middleware: [auth] }, async (c) => {
    const { type } = c.req.valid("query");
    if (type !== "email") throw new Invalid("type: only email codes are sent (studyflow has no SMS gateway)");
    const { userId, sessionId } = participantOf(c);
    // a repeat within seconds is answered as sent: the app cannot tell, and the first mail is on its way
    await sendEmailOtp(db, { userId, sessionId, now: new Date(clock()) });
    return c.json({ message: "OTP sent" }, 200);
  });

  const wrongCodes = failureRateLimits(
    limiter,
    WRONG_CODE_TIERS.map((tier) => ({
      ...tier,
      count: { failures: [401] },
      message: (retryAfterSeconds: number) => `too many wrong codes: ${tryAgainIn(retryAfterSeconds)}`,
      keys: (c: Context<AppEnv>) => [participantOf(c).userId],
    })),
  );
  router.openapi({ ...verifyRoute, middleware: [auth, verifyBody.middleware, wrongCodes] }, async (c) => {
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
  });
}
