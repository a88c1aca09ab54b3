/**
 * What a researcher and case-admin see through the API after `import:case` took a CASE
 * instance's management and messaging collections (fixtures in
 * packages/domain/test/case-import/case-management-dump.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseAccountUuid, importCaseDump, type CaseImportOptions } from "@studyflow/domain/case-import";
import { writeCaseDump } from "../../../../packages/domain/test/case-import/case-dump";
import { CASE_API_KEY, managementDump } from "../../../../packages/domain/test/case-import/case-management-dump";
import { bearer, managementToken } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";

describe("a CASE instance's researchers and templates after import:case", () => {
  let t: TestApp;
  let dir: string;
  const fixture = managementDump();
  const ninaId = caseAccountUuid(fixture.nina._id.toHexString());

  const importDump = async () => {
    const options: CaseImportOptions = {
      dumpDir: dir,
      instance: "tr",
      dbPrefix: "case_",
      only: ["studies", "users", "management", "messages"],
      dryRun: false,
      replace: false,
    };
    const summary = await importCaseDump(t.database.db, options, {}, { clock: Date.now });
    await t.settle();
    return summary;
  };

  beforeAll(async () => {
    t = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), "imported-management-"));
    await writeCaseDump(dir, fixture.spec);
    await importDump();
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a researcher imported with a permission holds it, and sees the study it names", async () => {
    const token = await managementToken(t, ninaId);
    const answer = await t.app.request("/v1/auth/permissions", { headers: bearer(token) });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      isAdmin: boolean;
      permissions: {
        subjectId: string;
        resourceType: string;
        resourceKey: string;
        action: string;
        limiter?: unknown;
      }[];
    };
    expect(body.isAdmin).toBe(false);
    expect(body.permissions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          subjectId: ninaId,
          resourceType: "study",
          resourceKey: "flu",
          action: "read-study-config",
        }),
        expect.objectContaining({ resourceKey: "flu", action: "update-survey", limiter: [{ surveyKey: "intake" }] }),
      ]),
    );
    const studies = await t.app.request("/v1/studies/", { headers: bearer(token) });
    expect(studies.status).toBe(200);
    const listed = (await studies.json()) as { studies: { key: string }[] };
    expect(listed.studies.map((study) => study.key)).toContain("flu");
  });

  it("a service account's CASE API key goes on working (X-API-Key), with the account's grants; a wrong one does not", async () => {
    const robotId = caseAccountUuid(fixture.robot._id.toHexString());
    const answer = await t.app.request("/v1/auth/permissions", { headers: { "X-API-Key": CASE_API_KEY } });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { permissions: { subjectId: string; resourceKey: string; action: string }[] };
    expect(body.permissions).toEqual([
      expect.objectContaining({ subjectId: robotId, resourceKey: "flu", action: "get-responses" }),
    ]);
    const wrong = `${CASE_API_KEY.slice(0, -1)}${CASE_API_KEY.endsWith("a") ? "b" : "a"}`;
    const refused = await t.app.request("/v1/auth/permissions", { headers: { "X-API-Key": wrong } });
    expect(refused.status).toBe(401);
  });

  it("an imported global e-mail template is listed to a researcher granted global templates in CASE", async () => {
    const token = await managementToken(t, ninaId);
    const answer = await t.app.request("/v1/messaging/email-templates/global-templates/", { headers: bearer(token) });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { templates: { messageType: string; translations: { lang: string }[] }[] };
    expect(body.templates).toEqual([
      expect.objectContaining({
        messageType: "registration",
        translations: [expect.objectContaining({ lang: "nl" }), expect.objectContaining({ lang: "en" })],
      }),
    ]);
  });

  it("a second import changes nothing", async () => {
    const summary = await importDump();
    expect(summary.changed).toBe(0);
  });
});
