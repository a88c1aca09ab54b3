import type { Executor } from "@studyflow/db";
import { loadCaseUser } from "../participant-accounts/case-user";
import { findParticipantSession } from "../participant-sessions/sessions";

/** What case-backend's participant token carries about the account, read for a valid token. */
export interface ParticipantTokenInfos {
  /** The profile the session acts for: the one it selected, else the main profile. */
  profileId: string;
  /** The account's other profiles. */
  otherProfileIds: string[];
  accountConfirmed: boolean;
}

/**
 * The account facts case-backend writes into its participant tokens (profile_id,
 * other_profile_ids, accountConfirmed), as they are now: studyflow's tokens carry only the
 * account and the session, so these are read when a client asks what its token says.
 */
export async function participantTokenInfos(
  db: Executor,
  principal: { userId: string; sessionId?: string },
): Promise<ParticipantTokenInfos> {
  const user = await loadCaseUser(db, principal.userId);
  const session = principal.sessionId ? await findParticipantSession(db, principal.sessionId, principal.userId) : null;
  const ids = user.profiles.map((profile) => profile.id);
  const main = user.profiles.find((profile) => profile.mainProfile)?.id ?? ids[0] ?? "";
  const selected = session?.selectedProfileId;
  const profileId = selected && ids.includes(selected) ? selected : main;
  return {
    profileId,
    otherProfileIds: ids.filter((id) => id !== profileId),
    accountConfirmed: user.account.accountConfirmedAt > 0,
  };
}
