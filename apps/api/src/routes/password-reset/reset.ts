import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { enforceRateLimits, hashResetToken, resetPassword } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { errorResponse, jsonContent, messageSchema } from "../schemas";
import { clientAddress } from "../../client-address";
import type { PasswordResetContext } from "./index";

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
      description:
        "12–512 bytes (UTF-8) with at least 3 of: lowercase letter, uppercase letter, digit, symbol; not a common password.",
    }),
  })
  .openapi("PasswordResetRequest");

const route = createRoute({
  method: "post",
  path: "/v1/password-reset/reset",
  tags: ["password reset"],
  summary: "Set a new password with a reset token",
  description:
    "Consumes the single-use token from the reset e-mail and sets the new password. Every participant " +
    "token issued before ends. A rejected password leaves the token usable.",
  request: {
    body: { required: true, content: { "application/json": { schema: resetRequest } } },
  },
  responses: {
    200: jsonContent(messageSchema, "the password is changed"),
    400: errorResponse(
      "invalid request body; an unknown, expired or used token (one message for all); or a password that breaks the rule",
    ),
    413: errorResponse("request body too large"),
    429: {
      ...errorResponse("too many attempts from this address or with this token"),
      headers: {
        "Retry-After": { description: "seconds until a retry can succeed", schema: { type: "integer", minimum: 1 } },
      },
    },
    500: errorResponse("internal error"),
  },
});

export function registerResetPassword(router: OpenAPIHono<AppEnv>, context: PasswordResetContext) {
  router.openapi(route, async (c) => {
    const { token, newPassword } = c.req.valid("json");
    // Counted before anything else, so a refused attempt touches no table.
    await enforceRateLimits(
      context.limiter,
      [
        {
          bucket: `password-reset:reset:address:${clientAddress(c)}`,
          limit: RESET_ATTEMPTS_PER_ADDRESS,
          windowSeconds: RESET_WINDOW_SECONDS,
        },
        {
          // Keyed by the hash: plain tokens never reach Redis either.
          bucket: `password-reset:reset:token:${hashResetToken(token)}`,
          limit: RESET_ATTEMPTS_PER_TOKEN,
          windowSeconds: RESET_WINDOW_SECONDS,
        },
      ],
      "too many password reset attempts; try again later",
    );
    await resetPassword(context.db, { token, newPassword, now: context.now() });
    return c.json({ message: "password reset successful" }, 200);
  });
}
