/**
 * Participant ids of studies imported from CASE: each of case-backend's id mappings
 * (pkg/study/utils/participantID.go), computed here by hand from its algorithm with node:crypto's
 * primitives and checked against fixed vectors, then against what studyflow derives.
 */
import { createCipheriv, createHash, createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { CASE_ID_MAPPING_METHODS, STUDYFLOW_ID_MAPPING_METHOD, type IdMappingMethod } from "@studyflow/db";
import {
  CaseGlobalSecretMissing,
  confidentialIdInStudy,
  confidentialIdOf,
  hashedAccountId,
  hashedAccountIdInStudy,
  participantIdsInStudy,
  participantIdsOf,
  setCaseStudyGlobalSecret,
} from "../src/participants/participant-ids";

const GLOBAL_SECRET = "case-global-secret-0123";
const STUDY_SECRET = "study-secret-abc";
/** A profile id as case-backend makes them: an ObjectID's hex. */
const PROFILE_ID = "5f1e2d3c4b5a69788796a5b4";
/** CASE's account id is the account's e-mail address. */
const ACCOUNT_ID = "anna@example.org";

/**
 * Go's cipher.NewCTR over AES, spelled out: the keystream is the AES encryption of the counter
 * block, which starts at the IV and is incremented as one 128-bit big-endian number per block.
 */
function aesCtrByHand(key: Buffer, iv: Buffer, plaintext: Buffer): Buffer {
  const counter = Buffer.from(iv);
  const out = Buffer.alloc(plaintext.length);
  for (let offset = 0; offset < plaintext.length; offset += 16) {
    const block = createCipheriv("aes-128-ecb", key, null).setAutoPadding(false).update(counter);
    for (let i = 0; i < 16 && offset + i < plaintext.length; i++) out[offset + i] = plaintext[offset + i]! ^ block[i]!;
    for (let i = 15; i >= 0; i--) {
      counter[i] = (counter[i]! + 1) & 0xff;
      if (counter[i] !== 0) break;
    }
  }
  return out;
}

const md5 = (text: string) => createHash("md5").update(text).digest();

/** ProfileIDtoParticipantID(userID, globalSecret, studySecret, method), by hand. */
function caseByHand(method: string, userId: string): string {
  const hashed = (algorithm: string) =>
    createHash(algorithm)
      .update(userId + GLOBAL_SECRET + STUDY_SECRET)
      .digest();
  // base64.RawURLEncoding: the URL alphabet, no padding
  const rawUrl = (bytes: Buffer) => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  switch (method) {
    case "same":
      return userId;
    case "sha224":
      return hashed("sha224").toString("hex");
    case "sha224-b64":
      return rawUrl(hashed("sha224"));
    case "sha256":
      return hashed("sha256").toString("hex");
    case "sha256-b64":
      return rawUrl(hashed("sha256"));
    default:
      // "aesctr" and the historical default: key md5(global + study), IV md5(user id)
      return aesCtrByHand(md5(GLOBAL_SECRET + STUDY_SECRET), md5(userId), Buffer.from(userId)).toString("hex");
  }
}

/** The same inputs through case-backend's algorithm, computed once elsewhere (Python's hashlib and cryptography). */
const VECTORS: Record<(typeof CASE_ID_MAPPING_METHODS)[number], { participant: string; account: string }> = {
  same: { participant: PROFILE_ID, account: ACCOUNT_ID },
  sha224: {
    participant: "62f128dfad872fb21be2dd8edaf5003c7d73a76a89ecc614e39f7d3e",
    account: "9757d4b4697b5e2894fdb8ba4a5ad00b9c6cb3d0cb9ce2dc8f830284",
  },
  "sha224-b64": {
    participant: "YvEo362HL7Ib4t2O2vUAPH1zp2qJ7MYU4599Pg",
    account: "l1fUtGl7XiiU_bi6SlrQC5xss9DLnOLcj4MChA",
  },
  sha256: {
    participant: "9afd133761d7ea76794d72b28ea2431cbfa479f1e37fa715837c8d0ce04f8342",
    account: "de8c8ae10a2cc65f40fe7681bf1578ba47076c8afe8f43d771211f0b7ad57436",
  },
  "sha256-b64": {
    participant: "mv0TN2HX6nZ5TXKyjqJDHL-kefHjf6cVg3yNDOBPg0I",
    account: "3oyK4Qosxl9A_naBvxV4ukcHbIr-j0PXcSEfC3rVdDY",
  },
  aesctr: {
    participant: "02d6868115aa89e7336c228f36628bcf96f7ef197d64d181",
    account: "fb9611a452771db0eaf877978664e151",
  },
  "": { participant: "02d6868115aa89e7336c228f36628bcf96f7ef197d64d181", account: "fb9611a452771db0eaf877978664e151" },
};

const studyWith = (idMappingMethod: IdMappingMethod) => ({ key: "imported", secret: STUDY_SECRET, idMappingMethod });

describe("participant ids of a study imported from CASE", () => {
  afterEach(() => setCaseStudyGlobalSecret(undefined));

  it.each(CASE_ID_MAPPING_METHODS.map((method) => [method]))(
    "method %j: participant id, confidential id and hashed account id as case-backend derives them",
    (method) => {
      const byHand = caseByHand(method, PROFILE_ID);
      expect(byHand).toBe(VECTORS[method].participant);
      expect(caseByHand(method, ACCOUNT_ID)).toBe(VECTORS[method].account);

      setCaseStudyGlobalSecret(GLOBAL_SECRET);
      const study = studyWith(method);
      const ids = participantIdsInStudy(study, PROFILE_ID);
      expect(ids.participantId).toBe(byHand);
      // ComputeParticipantIDs: the confidential id is the method applied to the participant id
      expect(ids.confidentialId).toBe(caseByHand(method, byHand));
      expect(confidentialIdInStudy(study, byHand)).toBe(ids.confidentialId);
      expect(hashedAccountIdInStudy(study, ACCOUNT_ID)).toBe(VECTORS[method].account);
    },
  );

  it("aesctr over more than one block (a confidential id is derived from a 48-character participant id)", () => {
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    const confidential = participantIdsInStudy(studyWith("aesctr"), PROFILE_ID).confidentialId;
    expect(confidential).toBe(
      "5d911b7de9ad2d5a6650863db4f679916c815161344fc7bcc26dc21618fd08ca04c58ebf73414c8788a2fe6474784b42",
    );
  });

  it("refuses a keyed CASE method without the global secret, naming the setting; `same` needs none", () => {
    for (const method of CASE_ID_MAPPING_METHODS.filter((m) => m !== "same")) {
      expect(() => participantIdsInStudy(studyWith(method), PROFILE_ID)).toThrow(CaseGlobalSecretMissing);
    }
    expect(() => confidentialIdInStudy(studyWith(""), "p1")).toThrow(/CASE_STUDY_GLOBAL_SECRET/);
    expect(participantIdsInStudy(studyWith("same"), PROFILE_ID)).toEqual({
      participantId: PROFILE_ID,
      confidentialId: PROFILE_ID,
    });
  });

  it("a different global secret gives different ids", () => {
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    const first = participantIdsInStudy(studyWith("sha256"), PROFILE_ID).participantId;
    setCaseStudyGlobalSecret(`${GLOBAL_SECRET}x`);
    expect(participantIdsInStudy(studyWith("sha256"), PROFILE_ID).participantId).not.toBe(first);
  });
});

describe("participant ids of a study created in studyflow", () => {
  it("stay studyflow's HMAC of the study secret, with or without a CASE global secret", () => {
    const study = studyWith(STUDYFLOW_ID_MAPPING_METHOD);
    // HMAC-SHA256 keyed by the study secret, hex
    const hmac = (input: string) => createHmac("sha256", STUDY_SECRET).update(input).digest("hex");
    for (const globalSecret of [undefined, GLOBAL_SECRET]) {
      setCaseStudyGlobalSecret(globalSecret);
      expect(participantIdsInStudy(study, PROFILE_ID)).toEqual({
        participantId: hmac(PROFILE_ID),
        confidentialId: hmac(hmac(PROFILE_ID)),
      });
      expect(confidentialIdInStudy(study, "p1")).toBe(confidentialIdOf(STUDY_SECRET, "p1"));
      expect(hashedAccountIdInStudy(study, ACCOUNT_ID)).toBe(hashedAccountId(STUDY_SECRET, ACCOUNT_ID));
    }
    setCaseStudyGlobalSecret(undefined);
  });
});

describe("a participant's confidential id", () => {
  afterEach(() => setCaseStudyGlobalSecret(undefined));

  it("is derived when first read, as it was derived before, and then kept", () => {
    const study = studyWith("sha256");
    // known by its participant id, in a keyed CASE study before the global secret is set: the
    // participant id needs no derivation, the confidential id does, and only reading it fails
    const ids = participantIdsOf(study, "p1");
    expect(ids.participantId).toBe("p1");
    expect(() => ids.confidentialId).toThrow(CaseGlobalSecretMissing);
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    const expected = confidentialIdInStudy(study, "p1");
    expect(ids.confidentialId).toBe(expected);
    // kept: the first value read, whatever the global secret is afterwards
    setCaseStudyGlobalSecret(`${GLOBAL_SECRET}x`);
    expect(ids.confidentialId).toBe(expected);
    // a copy carries the value, as a copy of the plain ids did
    expect({ ...ids }).toEqual({ participantId: "p1", confidentialId: expected });
    expect(JSON.parse(JSON.stringify(ids))).toEqual({ participantId: "p1", confidentialId: expected });
  });

  it("of a profile's participant is the method applied to its participant id, in either kind of study", () => {
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    for (const method of [STUDYFLOW_ID_MAPPING_METHOD, ...CASE_ID_MAPPING_METHODS] as IdMappingMethod[]) {
      const study = studyWith(method);
      const ids = participantIdsInStudy(study, PROFILE_ID);
      expect(ids.confidentialId).toBe(confidentialIdInStudy(study, ids.participantId));
      expect(participantIdsOf(study, ids.participantId).confidentialId).toBe(ids.confidentialId);
    }
  });
});
