import type { Database, ManagementSessionKind } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import type { SecretBox } from "../access/secret-box";
import { createManagementSession } from "./sessions";
import { upsertManagementUser, type ManagementSignInProfile, type ManagementUser } from "./users";

export interface ManagementSignIn {
  /** The person as the identity provider reported them. */
  profile: ManagementSignInProfile;
  /** Where the sign-in happened: case-admin (signin-with-idp) or studyflow's console. */
  kind: ManagementSessionKind;
  /** The provider's refresh token, sealed into the session; null when the sign-in gave none. */
  renewToken: string | null;
  ttlSeconds: number;
  /** The session's longest life from this sign-in, however often it is extended. */
  maxAgeSeconds: number;
  now: Date;
}

/**
 * A management user signed in, however they came (case-admin's signin-with-idp, the console's
 * OpenID Connect callback): the user of (provider, sub) created or updated, a session opened
 * holding the provider's refresh token sealed, and the sign-in audited, in one transaction.
 */
export async function signInManagementUser(
  db: Database,
  box: SecretBox,
  input: ManagementSignIn,
): Promise<{ user: ManagementUser; session: { id: string; expiresAt: Date }; created: boolean }> {
  return db.transaction(async (tx) => {
    const { user, created } = await upsertManagementUser(tx, input.profile, input.now);
    const session = await createManagementSession(tx, box, {
      userId: user.id,
      kind: input.kind,
      renewToken: input.renewToken,
      ttlSeconds: input.ttlSeconds,
      maxAgeSeconds: input.maxAgeSeconds,
      now: input.now,
    });
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: user.id,
        action: "session.signin",
        target: user.id,
        details: {
          provider: input.profile.provider,
          created,
          isAdmin: input.profile.isAdmin,
          sessionId: session.id,
          kind: input.kind,
          renewToken: input.renewToken !== null,
        },
      },
      input.now,
    );
    return { user, session, created };
  });
}
