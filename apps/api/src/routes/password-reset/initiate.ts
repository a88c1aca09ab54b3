import { createHash } from "node:crypto";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { enforceRateLimits, initiatePasswordReset, normalizeEmail } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { errorResponse, jsonContent, messageSchema } from "../schemas";
import { clientAddress } from "../../client-address";
import type { PasswordResetContext } from "./index";

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
  })
  .openapi("PasswordResetInitiateRequest");

const route = createRoute({
  method: "post",
  path: "/v1/password-reset/initiate",
  tags: ["password reset"],
  summary: "E-mail a password-reset link",
  description:
    "Sends a single-use reset link to the address if it belongs to an account. The answer is the same " +
    "whether or not it does.",
  request: {
    body: { required: true, content: { "application/json": { schema: initiateRequest } } },
  },
  responses: {
    200: jsonContent(messageSchema, "accepted; a link is sent if the address has an account"),
    400: errorResponse("invalid request body or e-mail address"),
    413: errorResponse("request body too large"),
    429: {
      ...errorResponse("too many requests from this address or for this e-mail"),
      headers: {
        "Retry-After": { description: "seconds until a retry can succeed", schema: { type: "integer", minimum: 1 } },
      },
    },
    500: errorResponse("internal error"),
  },
});

export function registerInitiatePasswordReset(router: OpenAPIHono<AppEnv>, context: PasswordResetContext) {
  router.openapi(route, async (c) => {
    const email = normalizeEmail(c.req.valid("json").email);
    // Hashed so that Redis holds no e-mail addresses.
    const emailKey = createHash("sha256").update(email, "utf8").digest("hex");
    await enforceRateLimits(
      context.limiter,
      [
        {
          bucket: `password-reset:initiate:address:${clientAddress(c)}`,
          limit: INITIATE_REQUESTS_PER_ADDRESS,
          windowSeconds: INITIATE_WINDOW_SECONDS,
        },
        {
          bucket: `password-reset:initiate:email:${emailKey}`,
          limit: INITIATE_REQUESTS_PER_EMAIL,
          windowSeconds: INITIATE_WINDOW_SECONDS,
        },
      ],
      "too many password reset requests; try again later",
    );
    await initiatePasswordReset(context.db, {
      email,
      now: context.now(),
      ttlSeconds: context.config.RESET_TOKEN_TTL_SECONDS,
      resetUrl: context.config.RESET_PASSWORD_URL,
    });
    return c.json({ message: INITIATED_MESSAGE }, 200);
  });
}
