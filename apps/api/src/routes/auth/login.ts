import { z } from "@hono/zod-openapi";
import { Unauthorized } from "@studyflow/domain/errors";
import { presentCaseUser } from "@studyflow/domain/participant-accounts";
import { openSignInSession } from "@studyflow/domain/participant-sessions";
import { INVALID_CREDENTIALS_MESSAGE, passwordSignIn } from "@studyflow/domain/participant-sign-in";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { tokenEnvelope, tokenEnvelopeSchema } from "./token-envelope";
import { emailKey, signInFailureLimits } from "./participant-limits";
import { sessionTokenSettings } from "./participant-session-settings";

export const loginRequest = z
  .object({
    email: z.string().trim().min(1, "required").max(254, "longer than 254 characters"),
    password: z.string().min(1, "required").max(1024, "longer than 1024 characters"),
    instanceID: z.string().max(100).optional(),
  })
  .openapi("CaseLoginRequest");

export function registerLogin(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const { clock } = deps;
  const limits = signInFailureLimits(limiter, "auth:login", loginRequest, (b) => emailKey(b.email));
  defineRoute(
    router,
    {
      method: "post",
      path: "/login",
      tags: ["participant auth"],
      summary: "Sign in with e-mail and password",
      description:
        "case-backend's loginWithEmail. Opens a session: a short access token (with the session in `sid`) and a " +
        "single-use refresh token. An unknown address and a wrong password get the same 401 after the same argon2 " +
        "work. Failed attempts are limited in growing tiers (1 min, 15 min, 1 h), answering 429 with Retry-After: " +
        "per account and client address (a client that keeps failing for an account is locked out of it, even " +
        "with the right password) and per client address over all accounts. Failures of one account from many " +
        "clients do not lock the account: they leave each client only 2 failures of its own an hour, so a client " +
        "with no failures of its own still signs in with the right password. Locked accounts and accounts being " +
        "deleted get a 401 after a correct password.",
      caseBody: loginRequest,
      bodyDescription: "The account's e-mail and password",
      afterBody: [...limits],
      responses: {
        200: jsonContent(tokenEnvelopeSchema, "signed in"),
        ...errorResponses([400, 401, 429], {
          400: "a field is missing or too long, or instanceID names another instance",
          401: "invalid email or password; or the account cannot sign in",
          429: "too many failed attempts from this client for this account, or from this client address",
        }),
      },
    },
    async (c) => {
      const { email, password, instanceID } = c.req.valid("json");
      checkInstanceId(deps.config, instanceID);
      const user = await passwordSignIn(db, email, password);
      if (!user) throw new Unauthorized(INVALID_CREDENTIALS_MESSAGE);
      const now = new Date(clock());
      // The session and the profiles in one statement; the account row is the one the password was
      // checked against, with the last login the session has just set.
      const { tokens, profiles } = await openSignInSession(db, {
        userId: user.id,
        now,
        settings: sessionTokenSettings(deps.config),
        identityProvenAt: now,
      });
      return c.json(await tokenEnvelope(db, tokens, presentCaseUser({ ...user, lastLoginAt: now }, profiles)), 200);
    },
  );
}
