import { eq } from "drizzle-orm";
import { users, type TokenPurpose } from "@studyflow/db";
import { INVALID_TEMP_TOKEN_MESSAGE, Unauthorized, peekAccountToken } from "@studyflow/domain";
import type { AppDeps } from "../../deps";
import { limitMailedTokenFailures } from "../../middleware/mailed-token-limit";
import type { RateLimiter } from "../../rate-limit";

/** Failed survey-login tokens per client address, counted together over both temp-token routes. */
export function tempTokenFailures(limiter: RateLimiter) {
  return limitMailedTokenFailures(limiter, "auth:temptoken:address", "too many failed attempts; try again later");
}

/** The account a usable survey-login token belongs to, with what the temp-token routes need of it. */
export function tempTokenHolder(deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  return async (tempToken: string, purposes: readonly TokenPurpose[], afterUse: readonly TokenPurpose[] = []) => {
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
}
