/**
 * A participant's uploaded file and app attributes after `import:case` took them from a CASE
 * instance (the file's bytes from case-backend's file folder): signed in with their CASE password,
 * the participant downloads the same bytes and lists the attributes. The study maps ids with
 * "same", so the participant id is the profile id.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseAccountUuid, importCaseDump, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createFileStore } from "@studyflow/domain/files";
import {
  caseBackendHash,
  caseParticipant,
  caseParticipantFile,
  caseStudy,
  caseUser,
  caseUserAttributes,
  writeCaseDump,
} from "../../../../packages/domain/test/case-import/case-dump";
import { bearer } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";

const PASSWORD = "ticks hide in tall grass";
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from("a tick bite, photographed"),
]);

describe("a participant's files and attributes imported from CASE", () => {
  let t: TestApp;
  let dir: string;
  const profileId = new ObjectId();
  const participantId = profileId.toHexString();
  const email = "photographer@example.org";
  const account = caseUser(email, caseBackendHash(PASSWORD), [profileId]);
  const file = caseParticipantFile("tr", "tekenradar", participantId, { size: PNG.length });
  const attributes = caseUserAttributes(account._id, "onboarding", { step: 2 });

  const importDump = async () => {
    const problems: unknown[] = [];
    const options: CaseImportOptions = {
      dumpDir: join(dir, "dump"),
      instance: "tr",
      dbPrefix: "",
      only: ["studies", "users"],
      dryRun: false,
      replace: false,
      filesDir: join(dir, "files"),
      fileStore: createFileStore(t.database.db, {
        backend: t.config.EXPORT_FILE_STORE,
        directory: t.config.RESULT_DIR,
      }),
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

  const signIn = async () => {
    const login = await t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD, instanceID: t.config.INSTANCE_ID }),
    });
    expect(login.status).toBe(200);
    return ((await login.json()) as { token: { accessToken: string } }).token.accessToken;
  };

  beforeAll(async () => {
    t = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), "case-files-attributes-"));
    await writeCaseDump(join(dir, "dump"), {
      instance: "tr",
      databases: {
        studyDB: {
          "study-infos": [caseStudy("tekenradar", { idMappingMethod: "same" })],
          tekenradar_participants: [caseParticipant(participantId)],
          tekenradar_participantFiles: [file],
        },
        users: { users: [account], userAttributes: [attributes] },
      },
    });
    await mkdir(join(dir, "files", "tr", "tekenradar"), { recursive: true });
    await writeFile(join(dir, "files", file.path), PNG);
    await importDump();
    await t.settle();
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the participant downloads the imported file and gets the same bytes", async () => {
    const token = await signIn();
    const fileId = caseAccountUuid(file._id.toHexString());
    const res = await t.app.request(
      `/v1/study-service/participant-data/tekenradar/files/${fileId}?pid=${participantId}`,
      { headers: bearer(token) },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/png/);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("the participant lists the imported attributes under their account", async () => {
    const token = await signIn();
    const res = await t.app.request("/v1/user/attributes", { headers: bearer(token) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      attributes: [
        {
          id: attributes._id.toHexString(),
          userId: caseAccountUuid(account._id.toHexString()),
          type: "onboarding",
          attributes: { step: 2 },
          createdAt: "2024-07-01T12:00:00Z",
        },
      ],
    });
  });

  it("importing the same dump again changes nothing", async () => {
    const summary = await importDump();
    expect(summary.changed).toBe(0);
  });
});
