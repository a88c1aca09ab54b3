import { z } from "@hono/zod-openapi";
import type {
  AccountDeletionProgress,
  AccountDeletionRow,
  ParticipantAccountSummary,
} from "@studyflow/domain/participant-accounts";

const instant = z.string().openapi({ format: "date-time" });

export const accountDeletionSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    status: z.enum(["pending", "running", "done", "failed"]),
    /** Participants taken out so far. */
    participantsDone: z.number().int(),
    error: z.string().nullable(),
    createdAt: instant,
    finishedAt: instant.nullable(),
  })
  .openapi("AccountDeletion");

export const accountDeletionProgressSchema = accountDeletionSchema
  .extend({ participantsTotal: z.number().int() })
  .openapi("AccountDeletionProgress");

export const participantAccountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    createdAt: instant,
    confirmedAt: instant.nullable(),
    lockedAt: instant.nullable(),
    lastLoginAt: instant.nullable(),
    deletionRequestedAt: instant.nullable(),
    profileCount: z.number().int(),
    deletion: accountDeletionSchema.nullable(),
  })
  .openapi("ParticipantAccount");

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function presentAccountDeletion(row: AccountDeletionRow): z.infer<typeof accountDeletionSchema> {
  return {
    id: row.id,
    userId: row.userId,
    status: row.status as z.infer<typeof accountDeletionSchema>["status"],
    participantsDone: row.progress.done.length,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    finishedAt: iso(row.finishedAt),
  };
}

export function presentAccountDeletionProgress(
  progress: AccountDeletionProgress,
): z.infer<typeof accountDeletionProgressSchema> {
  return { ...presentAccountDeletion(progress.deletion), participantsTotal: progress.total };
}

/** An account for operators: its state and counts; never its password hash, tokens or profiles' ids. */
export function presentParticipantAccount(
  account: ParticipantAccountSummary,
): z.infer<typeof participantAccountSchema> {
  return {
    id: account.id,
    email: account.email,
    createdAt: account.createdAt.toISOString(),
    confirmedAt: iso(account.confirmedAt),
    lockedAt: iso(account.lockedAt),
    lastLoginAt: iso(account.lastLoginAt),
    deletionRequestedAt: iso(account.deletionRequestedAt),
    profileCount: account.profileCount,
    deletion: account.deletion ? presentAccountDeletion(account.deletion) : null,
  };
}
