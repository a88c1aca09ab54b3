import { z } from "@hono/zod-openapi";
import { loadCaseUser, requestEmailChange } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { rateLimit, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { userEnvelope } from "./case-user-schema";
import { limitWrongPasswords } from "./password-attempts";

/**
 * Address changes an account may ask for per hour: each mails a link to an address the caller
 * chooses, so an unbounded route would let a stolen session mail anyone. A person who mistyped
 * needs two or three.
 */
const EMAIL_CHANGES_PER_HOUR = 5;

export const EMAIL_CHANGE_ANSWER = "if the address can be used, a confirmation link has been sent to it";

export function registerChangeAccountEmail(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/change-account-email",
      tags: ["user"],
      summary: "Ask to change the sign-in address (CASE)",
      description:
        "Verified before it takes effect (case-backend switches at once): a link is mailed to the new address, and " +
        "POST /v1/auth/verify-email with its token makes it the account's address; the current address, if " +
        "confirmed, gets a notice. The answer holds the account as it is, the old address still. An address " +
        "another account holds is not disclosed: the answer is the same, and no link is sent. A wrong `password` " +
        "is a 401 (as case-backend) and counts towards the per-account limit; at most " +
        `${EMAIL_CHANGES_PER_HOUR} requests per hour.`,
      security: PARTICIPANT_SECURITY,
      caseBody: z.object({
        // trimmed first, as case-backend sanitizes the address before it checks its form
        email: z
          .string()
          .trim()
          .pipe(z.email("email: not a valid e-mail address").max(254, "email is longer than 254 characters")),
        password: z.string().min(1, "password is required").max(1_024, "password is too long"),
      }),
      bodyDescription: "`email` (the new sign-in address) and `password` (the current one)",
      afterBody: [
        limitWrongPasswords(limiter),
        rateLimit(limiter, {
          name: "account-email-change",
          limit: EMAIL_CHANGES_PER_HOUR,
          windowSeconds: 3_600,
          keys: (c) => [`user:${participantOf(c).userId}`],
          count: "every-request",
          message: "too many address changes; try again later",
        }),
      ],
      responses: {
        200: jsonContent(
          userEnvelope.extend({ message: z.string() }),
          "the request is taken; the account is unchanged",
        ),
        ...errorResponses([400, 401, 409, 429], {
          400: "invalid body, or the address is the account's already",
          401: "wrong password (or no valid token)",
          409: "the account signs in through an external provider",
        }),
      },
    },
    async (c) => {
      const { email, password } = c.req.valid("json");
      const { userId } = participantOf(c);
      await requestEmailChange(db, {
        userId,
        newEmail: email,
        password,
        now: new Date(deps.clock()),
        verifyUrl: deps.config.VERIFY_EMAIL_URL,
      });
      return c.json({ message: EMAIL_CHANGE_ANSWER, user: await loadCaseUser(db, userId) }, 200);
    },
  );
}
