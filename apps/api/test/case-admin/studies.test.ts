import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { auditLog, managementUsers, participants, permissions, researcherSubscriptions, studies } from "@studyflow/db";
import { grantPermission } from "@studyflow/domain/study-setup";
import { managementToken, setupStudy } from "../fixtures";
import { createTestApp, type TestApp } from "../test-app";
import { caseAdminCall, replayCaseAdminCall } from "./replay";

describe("case-admin's study calls (CASE §3a)", () => {
  let t: TestApp;
  let admin: string;
  let reader: string;
  let stranger: string;
  let userId: string;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu" });
    await setupStudy(t, { key: "gone" });
    admin = await managementToken(t, "root", true);
    await grantPermission(t.database.db, "reader", "flu", "read-study-config");
    reader = await managementToken(t, "reader");
    stranger = await managementToken(t, "stranger");
    const [user] = await t.database.db
      .insert(managementUsers)
      .values({ sub: "entra-1", provider: "ms-entra", email: "ana@example.org", username: "Ana" })
      .returning();
    userId = user!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it("createStudy: 201 {study} inactive; 409 duplicate; 400 short secret; 403 without create-study", async () => {
    const call = caseAdminCall("createStudy");
    const body = { studyKey: "newstudy", secretKey: "a-long-enough-secret", isSystemDefaultStudy: true };
    const created = await replayCaseAdminCall(t, call, { body, token: admin });
    expect(created.failed).toBe(false);
    expect(created.status).toBe(201);
    expect(created.body.study).toMatchObject({ key: "newstudy", status: "inactive" });
    expect(JSON.stringify(created.body)).not.toContain("a-long-enough-secret");
    expect(created.body.study.props.systemDefaultStudy).toBe(true);
    const again = await replayCaseAdminCall(t, call, { body, token: admin });
    expect(again.status).toBe(409);
    const short = await replayCaseAdminCall(t, call, {
      body: { ...body, studyKey: "x2", secretKey: "short" },
      token: admin,
    });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatch(/secretKey/);
    const denied = await replayCaseAdminCall(t, call, { body: { ...body, studyKey: "x3" }, token: reader });
    expect(denied.status).toBe(403);
    const rows = await t.database.db.select().from(studies).where(eq(studies.key, "x3"));
    expect(rows).toHaveLength(0);
    expect((await replayCaseAdminCall(t, call, { body, token: undefined })).status).toBe(401);
  });

  it("getStudies / getStudy: the Study as case-admin reads it", async () => {
    const list = await replayCaseAdminCall(t, caseAdminCall("getStudies"), { token: reader });
    expect(list.failed).toBe(false);
    expect((list.body.studies as { key: string }[]).map((s) => s.key)).toEqual(["flu"]);
    const slashed = await t.app.request("/v1/studies/", { headers: { authorization: `Bearer ${reader}` } });
    expect(slashed.status).toBe(200);
    expect(((await slashed.json()) as { studies: { key: string }[] }).studies.map((s) => s.key)).toEqual(["flu"]);
    const one = await replayCaseAdminCall(t, caseAdminCall("getStudy"), { params: { studyKey: "flu" }, token: reader });
    expect(one.failed).toBe(false);
    const study = one.body.study;
    expect(study.key).toBe("flu");
    expect(Array.isArray(study.props.name)).toBe(true);
    expect(study.configs).toMatchObject({ trackAccount: false, participantFileUploadRule: null });
    expect(study.stats).toEqual({ participantCount: 0, tempParticipantCount: 0, responseCount: 0 });
    expect(
      (await replayCaseAdminCall(t, caseAdminCall("getStudy"), { params: { studyKey: "flu" }, token: stranger }))
        .status,
    ).toBe(403);
    expect(
      (await replayCaseAdminCall(t, caseAdminCall("getStudy"), { params: { studyKey: "nope" }, token: admin })).status,
    ).toBe(404);
  });

  it("status, is-default, display-props, file-upload-config, track-account", async () => {
    const p = { studyKey: "flu" };
    const status = await replayCaseAdminCall(t, caseAdminCall("updateStudyStatus"), {
      params: p,
      body: { status: "inactive" },
      token: admin,
    });
    expect(status.failed).toBe(false);
    const badStatus = await replayCaseAdminCall(t, caseAdminCall("updateStudyStatus"), {
      params: p,
      body: { status: "paused" },
      token: admin,
    });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error).toMatch(/status/);
    const denied = await replayCaseAdminCall(t, caseAdminCall("updateStudyStatus"), {
      params: p,
      body: { status: "active" },
      token: reader,
    });
    expect(denied.status).toBe(403);
    expect(
      (
        await replayCaseAdminCall(t, caseAdminCall("updateStudyIsDefault"), {
          params: p,
          body: { isDefault: true },
          token: admin,
        })
      ).failed,
    ).toBe(false);
    const label = (str: string) => [{ code: "en", parts: [{ dtype: "str", str }] }];
    const props = await replayCaseAdminCall(t, caseAdminCall("updateStudyDisplayProps"), {
      params: p,
      body: {
        name: [...label("Flu watch"), { code: "de", parts: [{ dtype: "str", str: "Grippe" }] }],
        description: label("Weekly"),
        tags: [{ label: [...label("flu"), { code: "de", parts: [{ dtype: "str", str: "Grippe" }] }] }],
      },
      token: admin,
    });
    expect(props.failed).toBe(false);
    const upload = await replayCaseAdminCall(t, caseAdminCall("updateStudyFileUploadConfig"), {
      params: p,
      body: { simplifiedAllowedUpload: true, expression: undefined },
      token: admin,
    });
    expect(upload.failed).toBe(false);
    const badRule = await replayCaseAdminCall(t, caseAdminCall("updateStudyFileUploadConfig"), {
      params: p,
      body: { simplifiedAllowedUpload: false, expression: { name: "noSuchFunction" } },
      token: admin,
    });
    expect(badRule.status).toBe(400);
    expect(badRule.body.error).toMatch(/expression/);
    const track = await replayCaseAdminCall(t, caseAdminCall("updateStudyTrackAccount"), {
      params: p,
      body: { trackAccount: true },
      token: admin,
    });
    expect(track.failed).toBe(false);
    const study = (await replayCaseAdminCall(t, caseAdminCall("getStudy"), { params: p, token: admin })).body.study;
    expect(study.status).toBe("inactive");
    expect(study.props.systemDefaultStudy).toBe(true);
    expect(study.props.name).toEqual([
      { code: "de", parts: [{ dtype: "str", str: "Grippe" }] },
      { code: "en", parts: [{ dtype: "str", str: "Flu watch" }] },
    ]);
    expect((study.props.tags[0].label as { code: string }[]).map((l) => l.code)).toEqual(["de", "en"]);
    expect(study.configs.participantFileUploadRule).toMatchObject({ name: "gt" });
    expect(study.configs.trackAccount).toBe(true);
  });

  it("notification subscriptions: PUT replaces the list, GET reads it", async () => {
    const p = { studyKey: "flu" };
    const subscriptions = [
      { messageType: "*", email: "A@example.org" },
      { messageType: "positive", email: "b@example.org" },
    ];
    const put = await replayCaseAdminCall(t, caseAdminCall("saveStudyNotifications"), {
      params: p,
      body: { subscriptions },
      token: admin,
    });
    expect(put.failed).toBe(false);
    const bad = await replayCaseAdminCall(t, caseAdminCall("saveStudyNotifications"), {
      params: p,
      body: { subscriptions: [{ messageType: "x", email: "not-mail" }] },
      token: admin,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/subscriptions\[0\]\.email/);
    const denied = await replayCaseAdminCall(t, caseAdminCall("saveStudyNotifications"), {
      params: p,
      body: { subscriptions: [] },
      token: reader,
    });
    expect(denied.status).toBe(403);
    const got = await replayCaseAdminCall(t, caseAdminCall("getStudyNotificationSubscriptions"), {
      params: p,
      token: reader,
    });
    expect(got.body.subscriptions).toEqual([
      { messageType: "*", email: "a@example.org" },
      { messageType: "positive", email: "b@example.org" },
    ]);
  });

  it("study permissions: add, list, remove", async () => {
    const p = { studyKey: "flu" };
    const add = await replayCaseAdminCall(t, caseAdminCall("addStudyPermission"), {
      params: p,
      body: { resourceType: "study", resourceKey: "flu", subjectId: userId, action: "get-responses", limiter: null },
      token: admin,
    });
    expect(add.failed).toBe(false);
    const badUser = await replayCaseAdminCall(t, caseAdminCall("addStudyPermission"), {
      params: p,
      body: { resourceType: "study", resourceKey: "flu", subjectId: "nobody", action: "get-responses", limiter: null },
      token: admin,
    });
    expect(badUser.status).toBe(400);
    expect(badUser.body.error).toMatch(/subjectId/);
    const denied = await replayCaseAdminCall(t, caseAdminCall("addStudyPermission"), {
      params: p,
      body: { resourceType: "study", resourceKey: "flu", subjectId: userId, action: "delete-study", limiter: null },
      token: reader,
    });
    expect(denied.status).toBe(403);
    const listed = await replayCaseAdminCall(t, caseAdminCall("getStudyPermissions"), { params: p, token: admin });
    expect(listed.body).toMatchObject({ permissions: expect.any(Object) });
    expect(listed.body.permissions[userId].user.email).toBe("ana@example.org");
    const [perm] = listed.body.permissions[userId].permissions;
    expect(perm).toMatchObject({ action: "get-responses", resourceKey: "flu", subjectId: userId });
    const hidden = await replayCaseAdminCall(t, caseAdminCall("getStudyPermissions"), { params: p, token: reader });
    expect(hidden.body.permissions[userId].permissions).toEqual([]);
    const del = caseAdminCall("deleleStudyPermission");
    expect(
      (await replayCaseAdminCall(t, del, { params: { studyKey: "gone", permissionId: perm.id }, token: admin })).status,
    ).toBe(400);
    expect(
      (await replayCaseAdminCall(t, del, { params: { studyKey: "flu", permissionId: perm.id }, token: admin })).failed,
    ).toBe(false);
    expect(
      (await replayCaseAdminCall(t, del, { params: { studyKey: "flu", permissionId: perm.id }, token: admin })).status,
    ).toBe(404);
  });

  it("deleteStudyAction: 403 writes nothing; the study and its rows go in one call, audited", async () => {
    const db = t.database.db;
    await grantPermission(db, "reader", "gone", "read-study-config");
    await db
      .insert(researcherSubscriptions)
      .values({ studyKey: "gone", messageType: "*", email: "x@example.org", createdBy: "t" });
    const call = caseAdminCall("deleteStudyAction");
    const denied = await replayCaseAdminCall(t, call, { params: { studyKey: "gone" }, token: reader });
    expect(denied.status).toBe(403);
    expect(await db.select().from(studies).where(eq(studies.key, "gone"))).toHaveLength(1);
    const done = await replayCaseAdminCall(t, call, { params: { studyKey: "gone" }, token: admin });
    expect(done.failed).toBe(false);
    expect(done.body.message).toBe("study deleted");
    expect(await db.select().from(studies).where(eq(studies.key, "gone"))).toHaveLength(0);
    expect(await db.select().from(permissions).where(eq(permissions.studyKey, "gone"))).toHaveLength(0);
    expect(
      await db.select().from(researcherSubscriptions).where(eq(researcherSubscriptions.studyKey, "gone")),
    ).toHaveLength(0);
    expect(await db.select().from(participants).where(eq(participants.studyKey, "gone"))).toHaveLength(0);
    const audit = await db.select().from(auditLog).where(eq(auditLog.studyKey, "gone"));
    expect(audit.map((entry) => entry.action)).toContain("study.delete");
    expect((await replayCaseAdminCall(t, call, { params: { studyKey: "gone" }, token: admin })).status).toBe(404);
  });
});
