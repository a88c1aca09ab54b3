import { z } from "@hono/zod-openapi";
import type { Executor } from "@studyflow/db";
import { loadCaseUser, type CaseUser } from "@studyflow/domain/participant-accounts";
import { type SessionTokens } from "@studyflow/domain/participant-sessions";
import { caseUserSchema } from "../user/case-user-schema";

/** CASE's token part of the sign-in answers (login, renew, OTP verify, temp-token login). */
export const caseTokenSchema = z
  .object({
    accessToken: z.string(),
    refreshToken: z.string().openapi({ description: "single use: each renewal answers a new one" }),
    expiresIn: z.number().int().openapi({ description: "access token lifetime, seconds" }),
    selectedProfile: z.string().openapi({ description: "the main profile's id" }),
    lastOTP: z
      .object({ email: z.number().int().optional() })
      .openapi({ description: "Unix seconds of the last e-mail OTP verified in this session; {} when none" }),
  })
  .openapi("CaseTokenResponse");

export const tokenEnvelopeSchema = z.object({ token: caseTokenSchema, user: caseUserSchema }).openapi("CaseSignIn");

export const unix = (at: Date) => Math.floor(at.getTime() / 1000);

/**
 * The CASE answer of a sign-in: the token pair and the user as GET /v1/user shows it (`user` when
 * the caller has it already, else read).
 */
export async function tokenEnvelope(db: Executor, tokens: SessionTokens, user?: CaseUser) {
  return {
    token: {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresIn: tokens.expiresIn,
      selectedProfile: tokens.selectedProfileId,
      lastOTP: tokens.lastEmailOtpAt ? { email: unix(tokens.lastEmailOtpAt) } : {},
    },
    user: user ?? (await loadCaseUser(db, tokens.userId)),
  };
}
