import { z } from "@hono/zod-openapi";
import { SIGNIN_SECRET_HEADER, requireSignInProof } from "../../auth/signin-proof";
import { checkInstanceId } from "../../case-compat";
import { addressKeys } from "../../client-address";
import type { AppDeps } from "../../deps";
import { failureRateLimits, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { signInManagementUser } from "@studyflow/domain/management-users";
import { answerForSession, nowOf, secretBoxOf, sessionAnswerSchema } from "./management-session-answer";

/** Go reads an absent or null string as "": so do we. */
const text = (max: number) =>
  z
    .string()
    .max(max, `is longer than ${max} characters`)
    .nullish()
    .transform((value) => value ?? "");

/** case-backend's SignInRequest; case-admin writes `imageURL`, Go's binding matches it to `imageUrl`. */
const signInBody = z.object({
  instanceId: text(100),
  sub: z.string().min(1, "missing sub").max(255, "is longer than 255 characters"),
  name: text(200),
  email: text(320),
  imageUrl: text(2_000),
  provider: text(100),
  roles: z
    .array(z.string().max(200, "is longer than 200 characters"))
    .max(200, "at most 200 roles")
    .nullish()
    .transform((roles) => roles ?? []),
  renewToken: text(16_384).openapi({ description: "the provider's refresh token; kept sealed in the session" }),
});

/**
 * Failed proofs (401) per client address, in growing tiers: guessing the sign-in secret is slowed
 * down like guessing a password.
 */
const PROOF_FAILURE_TIERS = [
  { limit: 10, windowSeconds: 60 },
  { limit: 30, windowSeconds: 15 * 60 },
  { limit: 60, windowSeconds: 60 * 60 },
] as const;

export function registerSignInWithIdp(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const box = secretBoxOf(deps.config);
  const proofFailures = failureRateLimits(
    limiter,
    PROOF_FAILURE_TIERS.map((tier) => ({
      name: `management-signin:address:${tier.windowSeconds}`,
      ...tier,
      count: { failures: [401] },
      message: "too many failed sign-in attempts; try again later",
      keys: (c) => addressKeys(c),
    })),
  );
  defineRoute(
    router,
    {
      method: "post",
      path: "/signin-with-idp",
      tags: ["management sign-in"],
      summary: "Sign a management user in after the identity provider did (case-admin)",
      description:
        "case-admin calls this after its OpenID Connect sign-in. case-backend trusts the body as it comes; studyflow " +
        `accepts it only from a caller that proves itself: one sending MANAGEMENT_IDP_SIGNIN_SECRET in ${SIGNIN_SECRET_HEADER} ` +
        "(compared in constant time), or one calling over the mutual-TLS listener (MANAGEMENT_IDP_SIGNIN_MTLS_PORT, " +
        "which serves only this route) with a client certificate signed by MANAGEMENT_IDP_SIGNIN_MTLS_CA; with neither " +
        "configured the sign-in is off (401). Creates or updates the management " +
        "user of (provider, sub) — an admin when `roles` holds MANAGEMENT_IDP_ADMIN_ROLE — and opens a session " +
        "holding the provider's refresh token sealed (AES-256-GCM). Unlike case-backend, a session is opened (and its " +
        "id answered) also without a refresh token, so every token it mints can be ended with its session.",
      security: [],
      middleware: [proofFailures, requireSignInProof(deps.config)],
      bothSlashes: true,
      caseBody: signInBody,
      responses: {
        200: jsonContent(sessionAnswerSchema, "signed in"),
        ...errorResponses([400, 401, 429, 503], {
          400: "invalid body, an empty `sub`, or an `instanceId` other than this server's INSTANCE_ID",
          401: `no ${SIGNIN_SECRET_HEADER} (nor a verified client certificate), a wrong one, or the sign-in is not enabled`,
        }),
      },
    },
    async (c) => {
      const body = c.req.valid("json");
      checkInstanceId(deps.config, body.instanceId);
      const sealer = box();
      const now = nowOf(deps);
      const isAdmin = body.roles.includes(deps.config.MANAGEMENT_IDP_ADMIN_ROLE);
      const { user, session } = await signInManagementUser(deps.database.db, sealer, {
        profile: {
          provider: body.provider,
          sub: body.sub,
          email: body.email,
          username: body.name,
          imageUrl: body.imageUrl,
          isAdmin,
        },
        kind: "case-admin",
        renewToken: body.renewToken === "" ? null : body.renewToken,
        ttlSeconds: deps.config.MANAGEMENT_SESSION_TTL_SECONDS,
        maxAgeSeconds: deps.config.MANAGEMENT_SESSION_MAX_AGE_SECONDS,
        now,
      });
      const answer = await answerForSession(deps, {
        userId: user.id,
        sessionId: session.id,
        sessionEndsAt: session.expiresAt,
        isAdmin: user.isAdmin,
        now,
      });
      return c.json(answer, 200);
    },
  );
}
