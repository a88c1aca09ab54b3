import { z } from "@hono/zod-openapi";
import { presentCaseProfile, type ProfileRow } from "@studyflow/domain/participant-accounts";
import { caseUnixTimeInput } from "../../case-compat/unix-time";

/** CASE's Profile as participant apps read it (`user.profiles[]`, and the profile routes' answers). */
export const caseProfileSchema = z
  .object({
    id: z.string(),
    alias: z.string(),
    consentConfirmedAt: z.number().int().openapi({ description: "Unix seconds; 0 = not given" }),
    createdAt: z.number().int(),
    avatarID: z.string(),
    mainProfile: z.boolean(),
  })
  .openapi("CaseProfile");

/**
 * CASE's User as GET /v1/user answers it (see loadCaseUser): no password hash, no token, no
 * verification code, nothing of another account.
 */
export const caseUserSchema = z
  .object({
    id: z.string(),
    account: z.object({
      type: z.literal("email"),
      accountID: z.string().openapi({ description: "the sign-in address" }),
      accountConfirmedAt: z.number().int().openapi({ description: "Unix seconds; 0 = not confirmed" }),
      preferredLanguage: z.string(),
      authType: z.enum(["password", "external"]),
    }),
    timestamps: z.object({
      createdAt: z.number().int(),
      lastLogin: z.number().int(),
      lastPasswordChange: z.number().int(),
      markedForDeletion: z.number().int(),
    }),
    profiles: z.array(caseProfileSchema).openapi({ description: "the main profile first" }),
    contactPreferences: z.object({
      subscribedToNewsletter: z.boolean(),
      sendNewsletterTo: z.array(z.string()),
      subscribedToWeekly: z.boolean(),
      receiveWeeklyMessageDayOfWeek: z.number().int(),
    }),
    contactInfos: z.array(
      z.object({
        id: z.string(),
        type: z.literal("email"),
        confirmedAt: z.number().int(),
        confirmationLinkSentAt: z.number().int(),
        email: z.string(),
      }),
    ),
  })
  .openapi("CaseUser");

export const userEnvelope = z.object({ user: caseUserSchema });
export const profileEnvelope = z.object({ profile: caseProfileSchema });

export const presentProfile = (row: ProfileRow) => ({ profile: presentCaseProfile(row) });

/** A profile as a participant app sends it: CASE's whole Profile; the server's fields are ignored. */
export const caseProfileInput = z.object({
  id: z.string().max(200, "id is longer than 200 characters").optional(),
  alias: z.string().max(100, "alias is longer than 100 characters").optional(),
  avatarID: z.string().max(100, "avatarID is longer than 100 characters").optional(),
  // participant apps send Date.now() (milliseconds); stored and answered in seconds
  consentConfirmedAt: caseUnixTimeInput("consentConfirmedAt").optional(),
  mainProfile: z.boolean().optional(),
  createdAt: caseUnixTimeInput("createdAt").optional(),
});

export type CaseProfileInput = z.output<typeof caseProfileInput>;

/** The changes a CASE profile body asks for, in the domain's terms. */
export const profileChangesOf = (body: CaseProfileInput) => ({
  ...(body.alias === undefined ? {} : { alias: body.alias }),
  ...(body.avatarID === undefined ? {} : { avatarId: body.avatarID }),
  ...(body.consentConfirmedAt === undefined ? {} : { consentConfirmedAt: body.consentConfirmedAt }),
});
