import { z } from "@hono/zod-openapi";
import { Unauthorized } from "@studyflow/domain/errors";
import { INVALID_RESET_TOKEN_MESSAGE, passwordResetTokenAccount } from "@studyflow/domain/participant-accounts";
import type { AppDeps } from "../../deps";
import { limitMailedTokenFailures } from "../../middleware/mailed-token-limit";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";

const infosRequest = z.object({ token: z.string().min(1, "required").max(200) }).openapi("PasswordResetInfosRequest");

export function registerPasswordResetInfos(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const { clock } = deps;
  const guesses = limitMailedTokenFailures(
    limiter,
    "password-reset:get-infos:address",
    "too many invalid tokens; try again later",
  );
  defineRoute(
    router,
    {
      method: "post",
      path: "/get-infos",
      tags: ["password reset"],
      summary: "The account a reset link is for",
      description:
        "case-backend's getPasswordResetInfos: the account's sign-in address (`accountId`), which the reset form " +
        "shows; nothing else. The token is not spent. Unknown, used and expired tokens answer 401 (case-backend: 400).",
      middleware: [guesses],
      caseBody: infosRequest,
      bodyDescription: "The token from the reset link",
      responses: {
        200: jsonContent(z.object({ accountId: z.string() }), "the token's account"),
        ...errorResponses([400, 401, 429], { 401: "invalid or expired reset token", 429: "too many invalid tokens" }),
      },
    },
    async (c) => {
      const account = await passwordResetTokenAccount(deps.database.db, c.req.valid("json").token, new Date(clock()));
      if (!account) throw new Unauthorized(INVALID_RESET_TOKEN_MESSAGE);
      return c.json({ accountId: account.email }, 200);
    },
  );
}
