import type { ManagementSubject } from "@studyflow/domain/access";

/** Who called a management route: a researcher, an operator or a machine, by token subject. */
export type ManagementPrincipal = ManagementSubject;

/** Who called a participant route: the signed-in user, whose profiles are checked per request. */
export interface ParticipantPrincipal {
  userId: string;
  /**
   * The sign-in session of the token (its `sid` claim), open when the request got here; absent
   * for tokens without one (operator-minted, external provider).
   */
  sessionId?: string;
  /**
   * Set only where a route accepts ended tokens (logout): the token is genuine and unexpired, but
   * its account, token version or session has ended.
   */
  ended?: true;
}
