/**
 * A study imported from CASE keeps case-backend's id mapping: a profile entering through the
 * participant route after the move becomes the participant it was in CASE. The expected ids are
 * computed here by hand, from case-backend's algorithm (pkg/study/utils/participantID.go), with
 * node:crypto's primitives, never with studyflow's own functions.
 */
import { createCipheriv, createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASE_ID_MAPPING_METHODS, confidentialIdMap, studies, surveyResponses, users } from "@studyflow/db";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import {
  call,
  num,
  onEvent,
  participantUser,
  postJson,
  readParticipant,
  managementToken,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const GLOBAL_SECRET = "the-case-instance-global-secret";
const STUDY_SECRET = "secretKey-of-the-case-study";

/** ProfileIDtoParticipantID(userID, STUDY_GLOBAL_SECRET, study.secretKey, method), by hand. */
function caseId(method: string, userId: string): string {
  const key = GLOBAL_SECRET + STUDY_SECRET;
  const digest = (algorithm: string) =>
    createHash(algorithm)
      .update(userId + key)
      .digest();
  const rawUrlBase64 = (bytes: Buffer) =>
    bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  switch (method) {
    case "same":
      return userId;
    case "sha224":
      return digest("sha224").toString("hex");
    case "sha224-b64":
      return rawUrlBase64(digest("sha224"));
    case "sha256":
      return digest("sha256").toString("hex");
    case "sha256-b64":
      return rawUrlBase64(digest("sha256"));
    default: {
      // aesctr, also CASE's historical default: AES key md5(global + study secret), counter from md5(user id)
      const md5 = (text: string) => createHash("md5").update(text).digest();
      const cipher = createCipheriv("aes-128-ctr", md5(key), md5(userId));
      return Buffer.concat([cipher.update(userId), cipher.final()]).toString("hex");
    }
  }
}

const studyKeyOf = (method: string) => `imported-${method || "default"}`;
const events = (studyKey: string, what: string) => `/v1/study-service/events/${studyKey}/${what}`;

describe("participant ids of studies imported from CASE", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    // as the API's start does with CASE_STUDY_GLOBAL_SECRET
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    for (const method of CASE_ID_MAPPING_METHODS) {
      const key = studyKeyOf(method);
      await setupStudy(t, {
        key,
        secret: STUDY_SECRET,
        trackAccount: true,
        rules: [onEvent("ENTER", call("ADD_NEW_SURVEY", str("weekly"), num(0), num(0), str("normal")))],
      });
      // what the import writes: the study's configs.idMappingMethod from CASE
      await t.database.db.update(studies).set({ idMappingMethod: method }).where(eq(studies.key, key));
    }
    await t.settle();
  });
  afterAll(async () => {
    setCaseStudyGlobalSecret(undefined);
    await t.close();
  });

  it.each(CASE_ID_MAPPING_METHODS.map((method) => [method]))(
    "method %j: a profile entering and submitting is CASE's participant, with CASE's confidential and account ids",
    async (method) => {
      const studyKey = studyKeyOf(method);
      const user = await participantUser(t);
      const profile = user.profiles[0]!;
      const [account] = await t.database.db.select().from(users).where(eq(users.id, user.user.id));

      const entered = await postJson(t, events(studyKey, "enter"), { profileID: profile.id }, user.token);
      expect(entered.status).toBe(200);
      expect(((await entered.json()) as { created: boolean }).created).toBe(true);

      const participantId = caseId(method, profile.id);
      const participant = await readParticipant(t.database.db, studyKey, participantId);
      expect(participant).toMatchObject({
        studyStatus: "active",
        hashedAccountId: caseId(method, account!.email),
        isMainProfile: true,
      });
      const mapped = await t.database.db
        .select({ confidentialId: confidentialIdMap.confidentialId })
        .from(confidentialIdMap)
        .where(and(eq(confidentialIdMap.studyKey, studyKey), eq(confidentialIdMap.profileId, profile.id)));
      expect(mapped).toEqual([{ confidentialId: caseId(method, participantId) }]);

      const submitted = await postJson(
        t,
        events(studyKey, "submit"),
        { profileID: profile.id, response: { key: "weekly", submittedAt: 1_700_000_000, responses: [] } },
        user.token,
      );
      expect(submitted.status).toBe(200);
      const responses = await t.database.db
        .select({ participantId: surveyResponses.participantId })
        .from(surveyResponses)
        .where(eq(surveyResponses.studyKey, studyKey));
      expect(responses).toEqual([{ participantId }]);

      // entering again finds the same participant
      const again = await postJson(t, events(studyKey, "enter"), { profileID: profile.id }, user.token);
      expect(((await again.json()) as { created: boolean }).created).toBe(false);
    },
  );

  it("the CASE study routes report each study's own method; a new study keeps studyflow's", async () => {
    await setupStudy(t, { key: "made-here" });
    const res = await t.app.request("/v1/studies", {
      headers: { authorization: `Bearer ${await managementToken(t, "root", true)}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { studies: { key: string; configs: { idMappingMethod: string } }[] };
    const methods = Object.fromEntries(body.studies.map((study) => [study.key, study.configs.idMappingMethod]));
    expect(methods).toEqual({
      ...Object.fromEntries(CASE_ID_MAPPING_METHODS.map((method) => [studyKeyOf(method), method])),
      "made-here": "hmac-sha256",
    });
  });
});
