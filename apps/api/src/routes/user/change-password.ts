import { z } from "@hono/zod-openapi";
import { changePassword } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";
import { limitWrongPasswords } from "./password-attempts";

/** Far above any password the policy accepts; the policy's own byte limit names the field. */
const MAX_PASSWORD_CHARS = 1_024;

export function registerChangePassword(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/password",
      tags: ["user"],
      summary: "Change the account's password (CASE)",
      description:
        "The new password must meet the password policy (400 naming `newPassword`); a wrong `oldPassword` is a 401, " +
        "as case-backend answers, and counts towards a per-account limit (429 with Retry-After). Then every other " +
        "session of the account is signed out (this one stays; a token without a session signs out everywhere), " +
        "open password-reset links stop working, and a notice is mailed.",
      security: PARTICIPANT_SECURITY,
      // the body is read (any Content-Type) before the limit looks at the request
      caseBody: z.object({
        oldPassword: z.string().min(1, "oldPassword is required").max(MAX_PASSWORD_CHARS, "oldPassword is too long"),
        newPassword: z.string().min(1, "newPassword is required").max(MAX_PASSWORD_CHARS, "newPassword is too long"),
      }),
      bodyDescription: "`oldPassword` (the current one) and `newPassword`",
      afterBody: [limitWrongPasswords(limiter)],
      responses: {
        200: jsonContent(messageSchema, "the password is changed"),
        ...errorResponses([400, 401, 409, 429], {
          400: "invalid body, or the new password does not meet the policy",
          401: "wrong oldPassword (or no valid token)",
          409: "the account signs in through an external provider, or its password changed meanwhile",
        }),
      },
    },
    async (c) => {
      const { oldPassword, newPassword } = c.req.valid("json");
      const { userId, sessionId } = participantOf(c);
      await changePassword(db, {
        userId,
        oldPassword,
        newPassword,
        now: new Date(deps.clock()),
        ...(sessionId === undefined ? {} : { sessionId }),
      });
      return c.json({ message: "password changed" }, 200);
    },
  );
}
