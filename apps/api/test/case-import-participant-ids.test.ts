/**
 * After the move, for every id mapping method case-backend knows: a dump whose study uses that
 * method holds a participant under the id CASE derived for a profile, and the account owning that
 * profile. Imported, the participant signs in with the password set in CASE, submits through the
 * app's route, and the response lands on the imported participant: same id, no new participant.
 * The ids are computed here by hand from case-backend's algorithm (pkg/study/utils), with
 * node:crypto's primitives, never with studyflow's own functions.
 */
import { createCipheriv, createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, surveyResponses } from "@studyflow/db";
import { importCaseDump } from "@studyflow/domain/case-import";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import {
  caseBackendHash,
  caseParticipant,
  caseStudy,
  caseSurvey,
  caseUser,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { postJson } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const GLOBAL_SECRET = "global-secret-of-the-case-instance";
const PASSWORD = "lichen grows slowly";
const METHODS = ["same", "sha224", "sha224-b64", "sha256", "sha256-b64", "aesctr", ""] as const;

const studyKeyOf = (method: string) => `moved-${method || "default"}`;
const secretOf = (method: string) => `secret-of-${studyKeyOf(method)}`;

/** ProfileIDtoParticipantID(profileID, STUDY_GLOBAL_SECRET, study.secretKey, method), by hand. */
function caseParticipantId(globalSecret: string, studySecret: string, method: string, profileId: string): string {
  const key = globalSecret + studySecret;
  const digest = (algorithm: string) =>
    createHash(algorithm)
      .update(profileId + key)
      .digest();
  // base64.RawURLEncoding
  const rawUrl = (bytes: Buffer) => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  switch (method) {
    case "same":
      return profileId;
    case "sha224":
      return digest("sha224").toString("hex");
    case "sha224-b64":
      return rawUrl(digest("sha224"));
    case "sha256":
      return digest("sha256").toString("hex");
    case "sha256-b64":
      return rawUrl(digest("sha256"));
    default: {
      // "aesctr" and CASE's historical default (no method set): AES-CTR, key md5(global + study secret), IV md5(profile id)
      const md5 = (text: string) => createHash("md5").update(text).digest();
      const cipher = createCipheriv("aes-128-ctr", md5(key), md5(profileId));
      return Buffer.concat([cipher.update(profileId), cipher.final()]).toString("hex");
    }
  }
}

const profileOf = Object.fromEntries(METHODS.map((method) => [method, new ObjectId()])) as Record<string, ObjectId>;
const emailOf = (method: string) => `moved-${method || "default"}@example.org`;
const idOf = (method: string) =>
  caseParticipantId(GLOBAL_SECRET, secretOf(method), method, profileOf[method]!.toHexString());

describe("participant ids after the move from CASE, for every id mapping method", () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    // as the API's start does with CASE_STUDY_GLOBAL_SECRET
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    dir = await mkdtemp(join(tmpdir(), "case-ids-after-move-"));
    const studyDB: Record<string, Record<string, unknown>[]> = {
      "study-infos": METHODS.map((method) => caseStudy(studyKeyOf(method), { idMappingMethod: method })),
    };
    for (const method of METHODS) {
      studyDB[`${studyKeyOf(method)}_surveys`] = [caseSurvey("weekly", "v1", 1_690_000_000)];
      studyDB[`${studyKeyOf(method)}_participants`] = [caseParticipant(idOf(method)), caseParticipant("someone-else")];
    }
    const hash = caseBackendHash(PASSWORD);
    await writeCaseDump(dir, {
      instance: "ids",
      databases: {
        studyDB,
        users: { users: METHODS.map((method) => caseUser(emailOf(method), hash, [profileOf[method]!])) },
      },
    });
    const problems: unknown[] = [];
    await importCaseDump(
      t.database.db,
      { dumpDir: dir, instance: "ids", dbPrefix: "", only: ["studies", "users"], dryRun: false, replace: false },
      { problem: (problem) => void problems.push(problem) },
      { clock: Date.now },
    );
    expect(problems).toEqual([]);
    await t.settle();
  });
  afterAll(async () => {
    setCaseStudyGlobalSecret(undefined);
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the hand-computed ids are case-backend's: its fixed vectors (as in case-id-mapping.test.ts)", () => {
    const byHand = (method: string) =>
      caseParticipantId("case-global-secret-0123", "study-secret-abc", method, "5f1e2d3c4b5a69788796a5b4");
    expect(byHand("same")).toBe("5f1e2d3c4b5a69788796a5b4");
    expect(byHand("sha224")).toBe("62f128dfad872fb21be2dd8edaf5003c7d73a76a89ecc614e39f7d3e");
    expect(byHand("sha224-b64")).toBe("YvEo362HL7Ib4t2O2vUAPH1zp2qJ7MYU4599Pg");
    expect(byHand("sha256")).toBe("9afd133761d7ea76794d72b28ea2431cbfa479f1e37fa715837c8d0ce04f8342");
    expect(byHand("sha256-b64")).toBe("mv0TN2HX6nZ5TXKyjqJDHL-kefHjf6cVg3yNDOBPg0I");
    expect(byHand("aesctr")).toBe("02d6868115aa89e7336c228f36628bcf96f7ef197d64d181");
    expect(byHand("")).toBe("02d6868115aa89e7336c228f36628bcf96f7ef197d64d181");
  });

  it.each(METHODS.map((method, i) => [method, i]))(
    "method %j: signs in with CASE's password, submits, and the response lands on the imported participant",
    async (method, i) => {
      const studyKey = studyKeyOf(method);
      const participantId = idOf(method);
      const before = await t.database.db
        .select({ participantId: participants.participantId })
        .from(participants)
        .where(eq(participants.studyKey, studyKey));
      expect(before.map((row) => row.participantId).sort()).toEqual([participantId, "someone-else"].sort());

      const login = await t.app.request("/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "text/plain;charset=UTF-8", "x-forwarded-for": `10.0.0.1, 203.0.113.${10 + i}` },
        body: JSON.stringify({ email: emailOf(method), password: PASSWORD, instanceID: t.config.INSTANCE_ID }),
      });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: { accessToken: string } };

      const submitted = await postJson(
        t,
        `/v1/study-service/events/${studyKey}/submit`,
        {
          profileID: profileOf[method]!.toHexString(),
          response: { key: "weekly", versionID: "v1", submittedAt: 1_800_000_000, responses: [] },
        },
        token.accessToken,
      );
      expect(submitted.status).toBe(200);

      const responses = await t.database.db
        .select({ participantId: surveyResponses.participantId })
        .from(surveyResponses)
        .where(eq(surveyResponses.studyKey, studyKey));
      expect(responses).toEqual([{ participantId }]);
      const after = await t.database.db
        .select({ participantId: participants.participantId })
        .from(participants)
        .where(eq(participants.studyKey, studyKey));
      expect(after.map((row) => row.participantId).sort()).toEqual([participantId, "someone-else"].sort());
    },
  );
});
