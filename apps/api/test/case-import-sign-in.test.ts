/**
 * A participant of a CASE deployment after `import:case`: signs in through the app's route with
 * the password set in CASE (its hash made here as case-backend's pwhash makes it) and sees the
 * study they take part in, found under the participant id CASE gave them (computed here by hand
 * as case-backend's pkg/study/utils does for "sha256": sha256(profileID + global + study secret)).
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCaseDump } from "@studyflow/domain/case-import";
import { setCaseStudyGlobalSecret } from "@studyflow/domain/participants";
import {
  caseBackendHash,
  caseParticipant,
  caseStudy,
  caseUser,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "moss on the north side";
const GLOBAL_SECRET = "case-global-secret-of-the-instance";

describe("a participant imported from CASE", () => {
  let t: TestApp;
  let dir: string;
  const profileId = new ObjectId();
  const email = "imported@example.org";
  const participantId = createHash("sha256")
    .update(profileId.toHexString() + GLOBAL_SECRET + "secret-of-tekenradar")
    .digest("hex");

  beforeAll(async () => {
    t = await createTestApp();
    // as the API's start does with CASE_STUDY_GLOBAL_SECRET
    setCaseStudyGlobalSecret(GLOBAL_SECRET);
    dir = await mkdtemp(join(tmpdir(), "case-sign-in-"));
    await writeCaseDump(dir, {
      instance: "tr",
      gzip: true,
      databases: {
        studyDB: {
          "study-infos": [caseStudy("tekenradar", { idMappingMethod: "sha256" })],
          tekenradar_participants: [caseParticipant(participantId), caseParticipant("someone-else")],
        },
        users: { users: [caseUser(email, caseBackendHash(PASSWORD), [profileId])] },
      },
    });
    const problems: unknown[] = [];
    const summary = await importCaseDump(
      t.database.db,
      { dumpDir: dir, instance: "tr", dbPrefix: "", only: ["studies", "users"], dryRun: false, replace: false },
      { problem: (problem) => void problems.push(problem) },
      { clock: Date.now },
    );
    expect(problems).toEqual([]);
    expect(summary.changed).toBe(4);
    await t.settle();
  });
  afterAll(async () => {
    setCaseStudyGlobalSecret(undefined);
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("signs in with the password set in CASE and sees the study they take part in", async () => {
    const login = await t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8", "x-forwarded-for": "10.0.0.1, 203.0.113.78" },
      body: JSON.stringify({ email, password: PASSWORD, instanceID: t.config.INSTANCE_ID }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: { accessToken: string } };

    const res = await t.app.request("/v1/study-service/studies/participating", {
      headers: { authorization: `Bearer ${token.accessToken}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { studies: { key: string; profileIds: string[] }[] };
    expect(body.studies.map((study) => [study.key, study.profileIds])).toEqual([
      ["tekenradar", [profileId.toHexString()]],
    ]);
  });
});
