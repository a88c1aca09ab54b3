import { z } from "@hono/zod-openapi";
import { PASSWORD_RULE_DESCRIPTION } from "@studyflow/domain/participant-accounts";
import { signUp } from "@studyflow/domain/participant-sign-in";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { caseTokenSchema } from "./token-envelope";
import { perAddress, takeSignupMail } from "./participant-limits";

const signupRequest = z
  .object({
    email: z.string().trim().pipe(z.email("not a valid e-mail address").max(254, "longer than 254 characters")),
    password: z.string().max(2048, "password must be at most 512 bytes long (UTF-8)"),
    infoCheck: z.string().max(1000).optional().openapi({ description: "honeypot: people leave it empty" }),
    preferredLanguage: z.string().max(20).default("en"),
    instanceID: z.string().max(100).optional(),
  })
  .openapi("CaseSignupRequest");

/** The same answer whether the address was free, taken, or the honeypot was filled. */
const SIGNUP_ANSWER = {
  message: "sign-up received: check your mailbox and sign in",
  token: { accessToken: "", refreshToken: "", expiresIn: 0, selectedProfile: "", lastOTP: {} },
  user: null,
};

/** Sign-ups per client address: a family signing up is fine, an account factory is not. */
const SIGNUPS_PER_ADDRESS = 10;
const SIGNUP_WINDOW_SECONDS = 60 * 60;

export function registerSignup(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const { clock } = deps;
  const limit = perAddress(
    limiter,
    "auth:signup",
    SIGNUPS_PER_ADDRESS,
    SIGNUP_WINDOW_SECONDS,
    "too many sign-ups; try again later",
  );
  defineRoute(
    router,
    {
      method: "post",
      path: "/signup",
      tags: ["participant auth"],
      summary: "Create an account",
      description:
        "case-backend's signupWithEmail, with one deliberate difference. A free address gets an account (main " +
        "profile, argon2id password) and a verify-email mail; a taken address gets nothing but a mail to its owner " +
        "saying someone tried (at most 3 sign-up mails to one address a day, whoever asks; further attempts mail " +
        "nothing and answer the same). So that the answer does not tell the two apart, both (and a filled honeypot " +
        "`infoCheck`, which creates nothing) answer 200 with the CASE envelope keys but **no credentials**: " +
        "`token` holds empty strings and `user` is null, where case-backend signs the new account in. Clients sign " +
        "in with POST /v1/auth/login afterwards (the tekenradar app does so already). Password policy: " +
        PASSWORD_RULE_DESCRIPTION,
      caseBody: signupRequest,
      bodyDescription: "The new account",
      afterBody: [limit],
      responses: {
        200: jsonContent(
          z.object({ message: z.string(), token: caseTokenSchema, user: z.null() }),
          "received (same answer for a new, a taken address and a filled honeypot)",
        ),
        ...errorResponses([400, 429], {
          400: "invalid e-mail, a password outside the policy (naming `password`), a bad preferredLanguage or instanceID",
          429: "too many sign-ups from this address",
        }),
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      checkInstanceId(deps.config, input.instanceID);
      if (input.infoCheck) return c.json(SIGNUP_ANSWER, 200);
      const notifyOwner = await takeSignupMail(limiter, input.email);
      await signUp(deps.database.db, {
        email: input.email,
        password: input.password,
        preferredLanguage: input.preferredLanguage,
        now: new Date(clock()),
        verifyEmailUrl: deps.config.VERIFY_EMAIL_URL,
        verifyEmailTtlSeconds: deps.config.VERIFY_EMAIL_TOKEN_TTL_SECONDS,
        passwordResetUrl: deps.config.RESET_PASSWORD_URL,
        notifyOwner,
      });
      return c.json(SIGNUP_ANSWER, 200);
    },
  );
}
