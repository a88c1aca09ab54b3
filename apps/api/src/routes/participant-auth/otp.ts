import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { Invalid, issueSessionTokens, sendEmailOtp, verifyEmailOtp } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import { rateLimit, type RateLimiter } from "../../rate-limit";
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
    "case-backend's requestOTP for type=email: a 6-digit code, valid 10 minutes, mailed through the outbox; " +
    "stored hashed; a new code ends the older ones. At most 3 codes per account in 10 minutes (429 with " +
    "Retry-After). type=sms answers 400: studyflow has no SMS gateway.",
  security: PARTICIPANT_SECURITY,
  request: { query: z.object({ type: z.string().max(20).default("email") }) },
  responses: {
    200: jsonContent(messageSchema, "code sent"),
    ...errorResponses([400, 401, 429], { 400: "type other than email", 429: "too many codes requested" }),
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
    "yet (the code proves the mailbox). Each code takes 5 wrong attempts, then it is dead (request a new one); " +
    "wrong, expired and dead codes answer the same 401.",
  security: PARTICIPANT_SECURITY,
  middleware: [verifyBody.middleware],
  request: { body: verifyBody.body },
  responses: {
    200: jsonContent(tokenEnvelopeSchema, "verified"),
    ...errorResponses([400, 401, 429], { 401: "invalid or expired code; or no valid access token" }),
  },
});

/** Wrong codes per account across codes, so requesting new codes does not multiply the guesses. */
const WRONG_CODES_PER_ACCOUNT = 10;
const WRONG_CODES_WINDOW_SECONDS = 60 * 60;

export function registerOtp(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const clock = deps.clock ?? Date.now;
  const auth = participantAuth(deps);
  router.openapi({ ...requestRoute, middleware: [auth] }, async (c) => {
    const { type } = c.req.valid("query");
    if (type !== "email") throw new Invalid("type: only email codes are sent (studyflow has no SMS gateway)");
    const { userId, sessionId } = participantOf(c);
    await sendEmailOtp(db, { userId, sessionId, now: new Date(clock()) });
    return c.json({ message: "OTP sent" }, 200);
  });

  const wrongCodes = rateLimit(limiter, {
    name: "auth:otp-verify:account",
    limit: WRONG_CODES_PER_ACCOUNT,
    windowSeconds: WRONG_CODES_WINDOW_SECONDS,
    count: { failures: [401] },
    message: "too many wrong codes; try again later",
    keys: (c) => [participantOf(c).userId],
  });
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
