import type { TokenPurpose } from "@studyflow/db";
import { Unauthorized } from "@studyflow/domain/errors";
import { peekAccountTokenAccount } from "@studyflow/domain/participant-accounts";
import { INVALID_TEMP_TOKEN_MESSAGE } from "@studyflow/domain/participant-sign-in";
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
    const account = await peekAccountTokenAccount(db, tempToken, purposes, new Date(clock()), { afterUse });
    if (!account) throw new Unauthorized(INVALID_TEMP_TOKEN_MESSAGE);
    return account;
  };
}
