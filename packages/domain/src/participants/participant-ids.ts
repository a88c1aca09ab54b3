import { createCipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { STUDYFLOW_ID_MAPPING_METHOD, type IdMappingMethod } from "@studyflow/db";

/**
 * Pseudonymous ids: HMAC-SHA256 keyed by the study secret, so ids of one study cannot be linked
 * to another study's or to the profile without the secret (unlike a plain concatenated hash).
 */
export function deriveId(studySecret: string, input: string): string {
  return createHmac("sha256", studySecret).update(input, "utf8").digest("hex");
}

export interface ParticipantIds {
  readonly participantId: string;
  /**
   * Owner id of confidential responses; derived once more so it differs from the participant id.
   * Derived when first read, then kept: most callers want the participant id only, and an event
   * needs this one only when it stores confidential items or a rule reads it.
   */
  readonly confidentialId: string;
}

/** The ids of a participant whose confidential id `derive` makes from the participant id, on first read. */
function withConfidentialId(participantId: string, derive: (participantId: string) => string): ParticipantIds {
  let confidentialId: string | undefined;
  return {
    participantId,
    // an own accessor: a spread or JSON of the ids reads it, as it read the value before
    get confidentialId() {
      return (confidentialId ??= derive(participantId));
    },
  };
}

export function participantIdsForProfile(studySecret: string, profileId: string): ParticipantIds {
  return withConfidentialId(deriveId(studySecret, profileId), (participantId) => deriveId(studySecret, participantId));
}

export function confidentialIdOf(studySecret: string, participantId: string): string {
  return deriveId(studySecret, participantId);
}

export function hashedAccountId(studySecret: string, accountEmail: string): string {
  return deriveId(studySecret, `account:${accountEmail}`);
}

/**
 * What deriving a study's ids needs of the study: its secret and its method. Every participant id,
 * confidential id and hashed account id of a study is derived through participantIdsInStudy,
 * confidentialIdInStudy and hashedAccountIdInStudy, so a study imported from CASE keeps CASE's
 * method everywhere (entering, submitting, merging, messages, exports, deletion).
 */
export interface StudyIdKeys {
  key: string;
  secret: string;
  idMappingMethod: IdMappingMethod;
}

/**
 * case-backend's STUDY_GLOBAL_SECRET, which its methods mix into every id besides the study's secret.
 * Set once at start by each process (CASE_STUDY_GLOBAL_SECRET); studies with studyflow's own method
 * never read it.
 */
let caseStudyGlobalSecret: string | undefined;

export function setCaseStudyGlobalSecret(secret: string | undefined): void {
  caseStudyGlobalSecret = secret === "" ? undefined : secret;
}

/** A study with one of CASE's keyed methods, in a process started without CASE_STUDY_GLOBAL_SECRET. */
export class CaseGlobalSecretMissing extends Error {
  constructor(study: StudyIdKeys) {
    super(
      `study ${study.key} derives participant ids with CASE's method "${study.idMappingMethod || "aesctr"}", ` +
        "which needs CASE_STUDY_GLOBAL_SECRET (the STUDY_GLOBAL_SECRET of the CASE instance it came from)",
    );
    this.name = "CaseGlobalSecretMissing";
  }
}

function caseGlobalSecretFor(study: StudyIdKeys): string {
  if (caseStudyGlobalSecret === undefined) throw new CaseGlobalSecretMissing(study);
  return caseStudyGlobalSecret;
}

const md5 = (text: string) => createHash("md5").update(text, "utf8").digest();

/** case-backend's AES-CTR mapping: key md5(global + study secret), counter md5(input), hex of the ciphertext. */
function caseAesCtr(input: string, key: string): string {
  const cipher = createCipheriv("aes-128-ctr", md5(key), md5(input));
  return Buffer.concat([cipher.update(input, "utf8"), cipher.final()]).toString("hex");
}

/** case-backend's hash mappings: the digest of input + global secret + study secret, hex or unpadded base64url. */
const caseDigest = (algorithm: "sha224" | "sha256", input: string, key: string, encoding: "hex" | "base64url") =>
  createHash(algorithm)
    .update(input + key, "utf8")
    .digest(encoding);

/** One application of the study's method to an input (a profile id, a participant id, an account). */
function mapInStudy(study: StudyIdKeys, input: string): string {
  const method = study.idMappingMethod;
  if (method === STUDYFLOW_ID_MAPPING_METHOD) return deriveId(study.secret, input);
  if (method === "same") return input;
  const key = caseGlobalSecretFor(study) + study.secret;
  switch (method) {
    case "sha224":
      return caseDigest("sha224", input, key, "hex");
    case "sha224-b64":
      return caseDigest("sha224", input, key, "base64url");
    case "sha256":
      return caseDigest("sha256", input, key, "hex");
    case "sha256-b64":
      return caseDigest("sha256", input, key, "base64url");
    case "aesctr":
    case "":
      return caseAesCtr(input, key);
  }
}

/**
 * The participant a profile is in a study, and its confidential id (the method applied once more,
 * to the participant id, as case-backend derives it).
 */
export function participantIdsInStudy(study: StudyIdKeys, profileId: string): ParticipantIds {
  if (study.idMappingMethod === STUDYFLOW_ID_MAPPING_METHOD) return participantIdsForProfile(study.secret, profileId);
  return participantIdsOf(study, mapInStudy(study, profileId));
}

/** The ids of a participant known by its participant id; its confidential id is derived on first read. */
export function participantIdsOf(study: StudyIdKeys, participantId: string): ParticipantIds {
  return withConfidentialId(participantId, (id) => mapInStudy(study, id));
}

export function confidentialIdInStudy(study: StudyIdKeys, participantId: string): string {
  return mapInStudy(study, participantId);
}

/**
 * The account, pseudonymised, on the participants of an account-tracking study. CASE applies its
 * method to the account id, which is the account's e-mail address.
 */
export function hashedAccountIdInStudy(study: StudyIdKeys, accountEmail: string): string {
  if (study.idMappingMethod === STUDYFLOW_ID_MAPPING_METHOD) return hashedAccountId(study.secret, accountEmail);
  return mapInStudy(study, accountEmail);
}

/** A temporary participant's id is its bearer secret: 256 random bits, never derived. */
export function newTemporaryParticipantId(): string {
  return randomBytes(32).toString("hex");
}

/**
 * A virtual participant's id: derived, as case-backend derives it, from a random profile id no
 * account holds, so it looks like any other participant id of the study in exports.
 */
export function newVirtualParticipantId(study: StudyIdKeys): string {
  return participantIdsInStudy(study, randomBytes(12).toString("hex")).participantId;
}
