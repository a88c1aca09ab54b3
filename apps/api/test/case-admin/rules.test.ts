import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { auditLog, studyRules } from "@studyflow/db";
import { managementToken, researcher, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

const STUDY = "flu";
const rule = (key: string) => ({
  name: "IFTHEN",
  data: [
    { dtype: "exp", exp: { name: "checkEventType", data: [{ str: "ENTER" }] } },
    { dtype: "exp", exp: { name: "UPDATE_FLAG", data: [{ str: key }, { str: "yes" }] } },
  ],
});

describe("case-admin rules pages against studyflow", () => {
  let t: TestApp;
  let manager: string;
  let managerSubject: string;
  const params = (extra: Record<string, string> = {}) => ({ studyKey: STUDY, ...extra });
  const save = (rules: unknown[], token = manager) =>
    replayCaseAdminCall(t, caseAdminCall("saveStudyRules"), { params: params(), body: { rules }, token });
  const versions = (token = manager) =>
    replayCaseAdminCall(t, caseAdminCall("getStudyRulesVersions"), { params: params(), token });
  const one = (versionID: string, token = manager) =>
    replayCaseAdminCall(t, caseAdminCall("getStudyRulesVersion"), { params: params({ versionID }), token });
  const del = (versionID: string, token = manager) =>
    replayCaseAdminCall(t, caseAdminCall("deleteStudyRuleVersion"), { params: params({ versionID }), token });
  const stored = () => t.database.db.select({ version: studyRules.version }).from(studyRules);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: STUDY });
    ({ token: manager, subject: managerSubject } = await researcher(t, STUDY, "manage-rules"));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    await t.database.sql`delete from study_rules`;
    await t.database.sql`delete from audit_log`;
  });

  it("saves (200 message), lists (id, uploadedAt in Unix seconds) and reads one version ({studyRules})", async () => {
    const saved = await save([rule("a")]);
    expect(saved.failed).toBe(false);
    expect(saved.body).toMatchObject({ message: "new study rules version published", version: 1, ruleCount: 1 });
    await save([rule("a"), rule("b")]);
    const listed = await versions();
    expect(listed.failed).toBe(false);
    expect((listed.body.versions as { id: string }[]).map((v) => v.id)).toEqual(["2", "1"]);
    expect(listed.body.versions[0]).toMatchObject({ studyKey: STUDY, uploadedBy: managerSubject, rules: null });
    expect(Number.isInteger(listed.body.versions[0].uploadedAt)).toBe(true);
    const got = await one("1");
    expect(got.failed).toBe(false);
    expect(got.body.studyRules).toMatchObject({
      id: "1",
      studyKey: STUDY,
      uploadedBy: managerSubject,
      rules: [rule("a")],
    });
    expect(typeof got.body.studyRules.uploadedAt).toBe("number");
  });

  it("deletes a version; deleting the highest makes the previous one current", async () => {
    await save([rule("a")]);
    await save([rule("b")]);
    const deleted = await del("2");
    expect(deleted.failed).toBe(false);
    expect(deleted.body).toEqual({ message: "study rule version deleted", currentVersion: 1 });
    expect(await stored()).toEqual([{ version: 1 }]);
    const current = await t.app.request(`/v1/studies/${STUDY}/rules/current`, {
      headers: { authorization: `Bearer ${manager}` },
    });
    expect((await current.json()).version).toBe(1);
    const audit = await t.database.db.select().from(auditLog);
    expect(audit.map((row) => row.action)).toEqual(["rules.set", "rules.set", "rules.delete"]);
  });

  it("400 for bad ids and invalid rules, 404 for unknown versions or study; nothing written", async () => {
    await save([rule("a")]);
    for (const id of ["x", "0", "-1"]) {
      const bad = await one(id);
      expect(bad.status, id).toBe(400);
      expect(bad.body.error, id).toMatch(/id must be a rules version number/);
      expect((await del(id)).status, id).toBe(400);
    }
    expect((await one("9")).status).toBe(404);
    expect((await del("9")).status).toBe(404);
    const invalid = await save([{ name: "NO_SUCH_ACTION" }]);
    expect(invalid.status).toBe(400);
    const empty = await replayCaseAdminCall(t, caseAdminCall("saveStudyRules"), {
      params: params(),
      rawBody: "",
      token: manager,
    });
    expect(empty.status).toBe(400);
    const admin = await managementToken(t, "root", true);
    const unknownStudy = await replayCaseAdminCall(t, caseAdminCall("getStudyRulesVersions"), {
      params: { studyKey: "nope" },
      token: admin,
    });
    expect(unknownStudy.status).toBe(404);
    expect(await stored()).toEqual([{ version: 1 }]);
    expect(await t.database.db.select().from(auditLog)).toHaveLength(1);
  });

  it("401 without a token, 403 without the right (reads with read-study-config), nothing written", async () => {
    await save([rule("a")]);
    const reader = (await researcher(t, STUDY, "read-study-config")).token;
    expect((await versions(reader)).failed).toBe(false);
    expect((await one("1", reader)).failed).toBe(false);
    expect((await save([rule("b")], reader)).status).toBe(403);
    expect((await del("1", reader)).status).toBe(403);
    expect((await del("1", "")).status).toBe(401);
    expect((await save([rule("b")], "")).status).toBe(401);
    const stranger = await managementToken(t, "stranger");
    expect((await versions(stranger)).status).toBe(403);
    expect(await stored()).toEqual([{ version: 1 }]);
  });
});
