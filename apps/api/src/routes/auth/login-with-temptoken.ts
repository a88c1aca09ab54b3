import { z } from "@hono/zod-openapi";
import { Invalid, Unauthorized } from "@studyflow/domain/errors";
import { verifyPassword } from "@studyflow/domain/participant-accounts";
import { issueSessionTokens } from "@studyflow/domain/participant-sessions";
import type { AppDeps } from "../../deps";
import { participantTokenCheck } from "../../middleware/auth";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { sessionTokenSettings } from "./participant-session-settings";
import { tempTokenFailures, tempTokenHolder } from "./temp-token";
import { tokenEnvelope, tokenEnvelopeSchema } from "./token-envelope";

const loginRequest = z
  .object({
    tempToken: z.string().max(200),
    password: z.string().max(1024).optional(),
    accessToken: z.string().max(4096).optional(),
  })
  .openapi("CaseLoginWithTempTokenRequest");

export function registerLoginWithTempToken(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const { clock } = deps;
  const accessTokenCheck = participantTokenCheck(deps);
  const holderOf = tempTokenHolder(deps);
  defineRoute(
    router,
    {
      method: "post",
      path: "/login-with-temptoken",
      tags: ["participant auth"],
      summary: "Sign in through a mailed survey link",
      description:
        "case-backend's loginWithTempToken: a usable survey-login token plus the account's password or an access " +
        "token of the same account that every participant route would accept (token version current, session still " +
        "open: a signed-out token is refused) opens a session; as in case-backend the answer's `lastOTP.email` is now " +
        "(the link came by mail). Survey-login and verify-email tokens are taken (the app signs in with the " +
        "verify-email link after confirming it, for an hour after its use). The token stays usable until it expires " +
        "(survey links are opened more than once). A session opened here is not a recent sign-in: deleting the " +
        "account from it needs the password. Wrong passwords count against the sign-in limits of the address.",
      middleware: [tempTokenFailures(limiter)],
      caseBody: loginRequest,
      bodyDescription: "The survey-login token and a proof of the account: its password or a valid access token",
      responses: {
        200: jsonContent(tokenEnvelopeSchema, "signed in"),
        ...errorResponses([400, 401, 429], {
          400: "neither password nor accessToken",
          401: "invalid token, invalid password or invalid access token",
        }),
      },
    },
    async (c) => {
      const { tempToken, password, accessToken } = c.req.valid("json");
      if (!password && !accessToken) throw new Invalid("password or accessToken: one of them is required");
      // case-backend takes its contact-verification tokens here too: the app signs in with the
      // verify-email link right after confirming (token-verification-success page)
      const holder = await holderOf(tempToken, ["survey-login", "verify-email"], ["verify-email"]);
      if (accessToken) {
        // The same check as every participant request: a token signed out, of an older token
        // version or of an ended session proves nothing.
        const subject = await accessTokenCheck(accessToken).then(
          (principal) => principal.userId,
          () => undefined,
        );
        if (subject !== holder.userId) throw new Unauthorized("invalid access token");
      }
      if (password && !(await verifyPassword(holder.passwordHash, password).catch(() => false))) {
        throw new Unauthorized("invalid password");
      }
      const now = new Date(clock());
      const tokens = await issueSessionTokens(db, {
        userId: holder.userId,
        now,
        settings: sessionTokenSettings(deps.config),
        lastEmailOtpAt: now,
        // no identityProvenAt: a mailed link is not the password (see assertRecentlyAuthenticated)
      });
      return c.json(await tokenEnvelope(db, tokens), 200);
    },
  );
}
