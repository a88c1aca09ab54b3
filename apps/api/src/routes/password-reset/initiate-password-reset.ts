import { createHash } from "node:crypto";
import { z } from "@hono/zod-openapi";
import { initiatePasswordReset, normalizeEmail } from "@studyflow/domain/participant-accounts";
import { addressKeys } from "../../client-address";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { rateLimit, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent, messageSchema } from "../schemas";

const INITIATE_WINDOW_SECONDS = 60 * 60;
/** Several people behind one address may forget passwords; a mail-bombing script gets little. */
const INITIATE_REQUESTS_PER_ADDRESS = 10;
/** A user retrying a lost e-mail a few times is fine; flooding one inbox is not. */
const INITIATE_REQUESTS_PER_EMAIL = 5;

/** Said for every valid address, known or not: the answer must not tell who has an account. */
const INITIATED_MESSAGE = "if the address belongs to an account, a reset link has been sent";

const initiateRequest = z
  .object({
    email: z.string().trim().pipe(z.email().max(254)).openapi({
      description: "Login e-mail of the account.",
      format: "email",
      maxLength: 254,
      example: "someone@example.org",
    }),
    instanceID: z
      .string()
      .max(100)
      .optional()
      .openapi({ description: "CASE's instance; must be INSTANCE_ID if given" }),
  })
  .openapi("PasswordResetInitiateRequest");

/** Per address first, then per e-mail; a request refused by the first does not count against the second. */
function initiateLimits(limiter: RateLimiter) {
  const shared = {
    windowSeconds: INITIATE_WINDOW_SECONDS,
    count: "every-request",
    message: "too many password reset requests; try again later",
    input: { json: initiateRequest },
  } as const;
  return [
    rateLimit(limiter, {
      ...shared,
      name: "password-reset:initiate:address",
      limit: INITIATE_REQUESTS_PER_ADDRESS,
      keys: (c) => addressKeys(c),
    }),
    rateLimit(limiter, {
      ...shared,
      name: "password-reset:initiate:email",
      limit: INITIATE_REQUESTS_PER_EMAIL,
      // Hashed so that Redis holds no e-mail addresses.
      keys: (_c, { email }) => [createHash("sha256").update(normalizeEmail(email), "utf8").digest("hex")],
    }),
  ];
}

export function registerInitiatePasswordReset(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "post",
      path: "/initiate",
      tags: ["password reset"],
      summary: "E-mail a password-reset link",
      description:
        "Sends a single-use reset link to the address if it belongs to an account. The answer is the same " +
        "whether or not it does (case-backend answers an unknown address with a 500), after the same database " +
        "work (one statement that writes the token and the mail only for a known address). The mailed link is " +
        "RESET_PASSWORD_URL with `?token=…` appended: point it at the participant app's page (tekenradar: " +
        "https://<app>/link/password-reset).",
      // the limits read the body, which the CASE reader makes JSON first
      caseBody: initiateRequest,
      bodyDescription: "The account's address",
      afterBody: [...initiateLimits(limiter)],
      responses: {
        200: jsonContent(messageSchema, "accepted; a link is sent if the address has an account"),
        ...errorResponses([400, 413, 429, 500], {
          400: "invalid request body or e-mail address",
          429: "too many requests from this address or for this e-mail",
        }),
      },
    },
    async (c) => {
      const { email, instanceID } = c.req.valid("json");
      checkInstanceId(deps.config, instanceID);
      await initiatePasswordReset(deps.database.db, {
        email: normalizeEmail(email),
        now: new Date(clock()),
        ttlSeconds: deps.config.RESET_TOKEN_TTL_SECONDS,
        resetUrl: deps.config.RESET_PASSWORD_URL,
      });
      return c.json({ message: INITIATED_MESSAGE }, 200);
    },
  );
}
