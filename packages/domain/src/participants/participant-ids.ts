import { createHmac, randomBytes } from "node:crypto";

/**
 * Pseudonymous ids: HMAC-SHA256 keyed by the study secret, so ids of one study cannot be linked
 * to another study's or to the profile without the secret (unlike a plain concatenated hash).
 */
export function deriveId(studySecret: string, input: string): string {
  return createHmac("sha256", studySecret).update(input, "utf8").digest("hex");
}

export interface ParticipantIds {
  participantId: string;
  /** Owner id of confidential responses; derived once more so it differs from the participant id. */
  confidentialId: string;
}

export function participantIdsForProfile(studySecret: string, profileId: string): ParticipantIds {
  const participantId = deriveId(studySecret, profileId);
  return { participantId, confidentialId: deriveId(studySecret, participantId) };
}

export function confidentialIdOf(studySecret: string, participantId: string): string {
  return deriveId(studySecret, participantId);
}

export function hashedAccountId(studySecret: string, accountEmail: string): string {
  return deriveId(studySecret, `account:${accountEmail}`);
}

/** A temporary participant's id is its bearer secret: 256 random bits, never derived. */
export function newTemporaryParticipantId(): string {
  return randomBytes(32).toString("hex");
}
