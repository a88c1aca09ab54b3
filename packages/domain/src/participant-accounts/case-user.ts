import { asc, eq } from "drizzle-orm";
import { profiles, users, type Executor } from "@studyflow/db";
import { NotFound } from "../errors";

/** Unix seconds of an instant, 0 for none: CASE's convention for "never". */
const unix = (date: Date | null | undefined): number => (date ? Math.floor(date.getTime() / 1000) : 0);

/** A profile as CASE's participant API shows it. */
export interface CaseProfile {
  id: string;
  alias: string;
  consentConfirmedAt: number;
  createdAt: number;
  avatarID: string;
  mainProfile: boolean;
}

/**
 * The account as CASE's participant API shows it (`GET /v1/user`, login, signup, renew). Holds no
 * secret: no password hash, no verification code, no rate-limit counters (case-backend blanks the
 * password and sends the rest; studyflow keeps those elsewhere and sends none).
 */
export interface CaseUser {
  id: string;
  account: {
    type: "email";
    accountID: string;
    accountConfirmedAt: number;
    preferredLanguage: string;
    authType: "password" | "external";
  };
  timestamps: {
    createdAt: number;
    lastLogin: number;
    lastPasswordChange: number;
    markedForDeletion: number;
  };
  profiles: CaseProfile[];
  contactPreferences: {
    subscribedToNewsletter: boolean;
    sendNewsletterTo: string[];
    subscribedToWeekly: boolean;
    receiveWeeklyMessageDayOfWeek: number;
  };
  contactInfos: {
    id: string;
    type: "email";
    confirmedAt: number;
    confirmationLinkSentAt: number;
    email: string;
  }[];
}

export type ProfileRow = typeof profiles.$inferSelect;
export type UserRow = typeof users.$inferSelect;

export function presentCaseProfile(profile: ProfileRow): CaseProfile {
  return {
    id: profile.id,
    alias: profile.alias,
    consentConfirmedAt: unix(profile.consentConfirmedAt),
    createdAt: unix(profile.createdAt),
    avatarID: profile.avatarId,
    mainProfile: profile.mainProfile,
  };
}

/** The main profile first, then the others by creation: CASE clients take profiles[0] as the main one. */
export function presentCaseUser(user: UserRow, userProfiles: readonly ProfileRow[]): CaseUser {
  const ordered = [...userProfiles].sort(
    (a, b) => Number(b.mainProfile) - Number(a.mainProfile) || a.createdAt.getTime() - b.createdAt.getTime(),
  );
  return {
    id: user.id,
    account: {
      type: "email",
      accountID: user.email,
      accountConfirmedAt: unix(user.accountConfirmedAt),
      preferredLanguage: user.preferredLanguage,
      authType: user.externalIssuer ? "external" : "password",
    },
    timestamps: {
      createdAt: unix(user.createdAt),
      lastLogin: unix(user.lastLoginAt),
      lastPasswordChange: unix(user.passwordChangedAt),
      markedForDeletion: unix(user.deletionRequestedAt),
    },
    profiles: ordered.map(presentCaseProfile),
    contactPreferences: {
      subscribedToNewsletter: user.subscribedToNewsletter,
      sendNewsletterTo: user.subscribedToNewsletter ? [user.id] : [],
      subscribedToWeekly: user.subscribedToWeekly,
      receiveWeeklyMessageDayOfWeek: user.weeklyMessageDayOfWeek,
    },
    contactInfos: [
      {
        // One contact: the account address; its id is the user's (studyflow keeps no separate contact rows).
        id: user.id,
        type: "email",
        confirmedAt: unix(user.accountConfirmedAt),
        confirmationLinkSentAt: 0,
        email: user.email,
      },
    ],
  };
}

/** The CASE view of one account, read in one round trip per table; NotFound when it is gone. */
export async function loadCaseUser(db: Executor, userId: string): Promise<CaseUser> {
  const [user] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
  if (!user) throw new NotFound("account not found");
  const rows = await db.select().from(profiles).where(eq(profiles.userId, userId)).orderBy(asc(profiles.createdAt));
  return presentCaseUser(user, rows);
}
