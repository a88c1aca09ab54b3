import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { users, type TokenPurpose } from "@studyflow/db";
import {
  INVALID_TEMP_TOKEN_MESSAGE,
  Invalid,
  Unauthorized,
  issueSessionTokens,
  peekAccountToken,
  verifyPassword,
} from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { caseJsonBody, checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { participantTokenCheck } from "../../middleware/auth";
import { limitMailedTokenFailures } from "../../middleware/mailed-token-limit";
import type { RateLimiter } from "../../rate-limit";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { tokenEnvelope, tokenEnvelopeSchema } from "./envelope";
import { sessionTokenSettings } from "./session-settings";

const infoRequest = z
  .object({ tempToken: z.string().max(200), instanceID: z.string().max(100).optional() })
  .openapi("CaseTempTokenInfoRequest");
const infoBody = caseJsonBody(infoRequest, "A survey-login token from a mailed link");

const infoRoute = createRoute({
  method: "post",
  path: "/temptoken-info",
  tags: ["participant auth"],
  summary: "Whose a survey-login token is",
  description:
    "case-backend's getTempTokenInfo: the account a usable survey-login token (a mailed link) belongs to, so the " +
    "app can ask that account's password. Unknown, used and expired tokens answer 401 (case-backend: 400).",
  middleware: [infoBody.middleware],
  request: { body: infoBody.body },
  responses: {
    200: jsonContent(z.object({ userID: z.string(), email: z.string() }), "the token's account"),
    ...errorResponses([400, 401, 429], { 401: "invalid token" }),
  },
});

const loginRequest = z
  .object({
    tempToken: z.string().max(200),
    password: z.string().max(1024).optional(),
    accessToken: z.string().max(4096).optional(),
  })
  .openapi("CaseLoginWithTempTokenRequest");
const loginBody = caseJsonBody(
  loginRequest,
  "The survey-login token and a proof of the account: its password or a valid access token",
);

const loginRoute = createRoute({
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
  middleware: [loginBody.middleware],
  request: { body: loginBody.body },
  responses: {
    200: jsonContent(tokenEnvelopeSchema, "signed in"),
    ...errorResponses([400, 401, 429], {
      400: "neither password nor accessToken",
      401: "invalid token, invalid password or invalid access token",
    }),
  },
});

export function registerTempToken(router: OpenAPIHono<AppEnv>, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  const clock = deps.clock ?? Date.now;
  const accessTokenCheck = participantTokenCheck(deps);
  const failures = limitMailedTokenFailures(
    limiter,
    "auth:temptoken:address",
    "too many failed attempts; try again later",
  );

  const holderOf = async (
    tempToken: string,
    purposes: readonly TokenPurpose[],
    afterUse: readonly TokenPurpose[] = [],
  ) => {
    const holder = await peekAccountToken(db, tempToken, purposes, new Date(clock()), { afterUse });
    if (!holder) throw new Unauthorized(INVALID_TEMP_TOKEN_MESSAGE);
    const [user] = await db
      .select({ email: users.email, passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.id, holder.userId))
      .limit(1);
    if (!user) throw new Unauthorized(INVALID_TEMP_TOKEN_MESSAGE);
    return { userId: holder.userId, ...user };
  };

  router.openapi({ ...infoRoute, middleware: [failures, infoBody.middleware] }, async (c) => {
    const { tempToken, instanceID } = c.req.valid("json");
    checkInstanceId(deps.config, instanceID);
    const holder = await holderOf(tempToken, ["survey-login"]);
    return c.json({ userID: holder.userId, email: holder.email }, 200);
  });

  router.openapi({ ...loginRoute, middleware: [failures, loginBody.middleware] }, async (c) => {
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
  });
}
