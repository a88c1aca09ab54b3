/**
 * A CASE study's data after `import:case`, through the API: a researcher's data explorer lists
 * the imported responses as flat CASE objects, and the participant, signed in with their CASE
 * password, reads the report the study's rules wrote for them in CASE. The study maps ids with
 * "same", so the participant id is the profile id.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseAccountUuid, importCaseDump, type CaseImportOptions } from "@studyflow/domain/case-import";
import {
  caseBackendHash,
  caseParticipant,
  caseReport,
  caseResponse,
  caseStudy,
  caseSurvey,
  caseUser,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { bearer, managementToken } from "./fixtures";
import { caseSurvey as uploadedSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const PASSWORD = "ticks hide in tall grass";

describe("a study's data imported from CASE", () => {
  let t: TestApp;
  let dir: string;
  const profileId = new ObjectId();
  const participantId = profileId.toHexString();
  const email = "reporter@example.org";
  const responseId = new ObjectId();

  const importDump = async () => {
    const problems: unknown[] = [];
    const options: CaseImportOptions = {
      dumpDir: dir,
      instance: "tr",
      dbPrefix: "",
      only: ["studies", "users"],
      dryRun: false,
      replace: false,
    };
    const summary = await importCaseDump(
      t.database.db,
      options,
      { problem: (p) => void problems.push(p) },
      {
        clock: Date.now,
      },
    );
    expect(problems).toEqual([]);
    return summary;
  };

  beforeAll(async () => {
    t = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), "case-study-data-"));
    await writeCaseDump(dir, {
      instance: "tr",
      databases: {
        studyDB: {
          "study-infos": [caseStudy("tekenradar", { idMappingMethod: "same" })],
          // with the questions of a survey case-editor makes, so the export has columns for them
          tekenradar_surveys: [
            {
              ...caseSurvey("intake", "v1", 1_700_000_000),
              surveyDefinition: uploadedSurvey("intake").surveyDefinition,
            },
          ],
          tekenradar_participants: [caseParticipant(participantId), caseParticipant("someone-else")],
          tekenradar_surveyResponses: [
            caseResponse(participantId, "intake", "v1", 1_700_000_100, { _id: responseId }),
            caseResponse("someone-else", "intake", "v1", 1_700_000_200),
          ],
          tekenradar_reports: [
            caseReport(participantId, "tickBite", responseId.toHexString(), 1_700_000_101),
            caseReport("someone-else", "tickBite", "", 1_700_000_201),
          ],
        },
        users: { users: [caseUser(email, caseBackendHash(PASSWORD), [profileId])] },
      },
    });
    await importDump();
    await t.settle();
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a researcher sees the imported responses in the data explorer", async () => {
    const admin = await managementToken(t, "root", true);
    const res = await t.app.request("/v1/studies/tekenradar/data-explorer/responses?surveyKey=intake", {
      headers: bearer(admin),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { responses: Record<string, unknown>[]; pagination: { totalCount: number } };
    expect(body.pagination.totalCount).toBe(2);
    expect(body.responses[0]).toMatchObject({
      ID: caseAccountUuid(responseId.toHexString()),
      participantID: participantId,
      version: "v1",
      opened: 1_700_000_040,
      submitted: 1_700_000_100,
    });
    // the answer imported with the response, in its question's column
    expect(body.responses[0]).toMatchObject({ "intake.Q1": "2", session: "", engineVersion: "1.2.0" });
  });

  it("the participant reads their own report, naming the response it came from", async () => {
    const login = await t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD, instanceID: t.config.INSTANCE_ID }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: { accessToken: string } };
    const res = await t.app.request(`/v1/study-service/participant-data/tekenradar/reports?pid=${participantId}`, {
      headers: bearer(token.accessToken),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { reports: Record<string, unknown>[] };
    expect(body.reports).toEqual([
      {
        id: expect.any(String),
        key: "tickBite",
        participantID: participantId,
        responseID: caseAccountUuid(responseId.toHexString()),
        timestamp: 1_700_000_101,
        modifiedAt: "0001-01-01T00:00:00Z",
        data: [
          { key: "fever", value: "yes", dtype: "string" },
          { key: "count", value: "3" },
        ],
      },
    ]);
  });

  it("importing the same dump again changes nothing", async () => {
    const summary = await importDump();
    expect(summary.changed).toBe(0);
  });
});
