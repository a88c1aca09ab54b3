import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, tasks } from "@studyflow/db";
import { createApiKey, revokeApiKey, revokeSubjectTokens } from "@studyflow/domain/access";
import { grantPermission } from "@studyflow/domain/study-setup";
import { call, managementToken, onEvent, participantUser, postJson, setupStudy, str } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const DAY_MS = 86_400_000;
const rules = [onEvent("CUSTOM", call("UPDATE_FLAG", str("seen"), str("yes")))];
const runActions = (study: string) => `/v1/studies/${study}/run-actions/participants/`;

describe("service accounts: management API with X-API-Key", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
    await setupStudy(t, { key: "study-b" });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A service account holding the given grants on studies, and a key for it. */
  async function serviceKey(grants: [studyKey: string, action: "run-study-action" | "edit-participant-data"][] = []) {
    const subject = `svc-${Math.random().toString(36).slice(2, 10)}`;
    for (const [studyKey, action] of grants) await grantPermission(t.database.db, subject, studyKey, action);
    const created = await createApiKey(t.database.db, { now: new Date(), subject, createdBy: "test" });
    return { subject, key: created.key, id: created.apiKey.id };
  }

  const withKey = (key: string, headers: Record<string, string> = {}) => ({ "X-API-Key": key, ...headers });
  const createTask = (study: string, key: string, headers: Record<string, string> = {}) =>
    postJson(t, runActions(study), { rules, dryRun: true }, undefined, "POST", withKey(key, headers));
  const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

  it("acts as its subject: creates a run-actions task on a study it has the right for (200)", async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    const res = await createTask("study-a", svc.key);
    expect(res.status).toBe(200);
    const { task } = (await res.json()) as { task: { id: string; createdBy: string } };
    expect(task.createdBy).toBe(svc.subject);
    // the task is the subject's: the same key reads it back
    const read = await t.app.request(`${runActions("study-a")}task/${task.id}`, { headers: withKey(svc.key) });
    expect(read.status).toBe(200);
    const [row] = await t.database.db.select().from(apiKeys).where(eq(apiKeys.id, svc.id));
    expect(row?.lastUsedAt).toBeInstanceOf(Date);
  });

  it("accepts and ignores X-Instance-ID (the reference backend sends it)", async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    expect((await createTask("study-a", svc.key, { "X-Instance-ID": "anything" })).status).toBe(200);
  });

  it("403 on a study it has no right for, and 403 for a right it does not hold", async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    const other = await createTask("study-b", svc.key);
    expect(other.status).toBe(403);
    expect(await errorOf(other)).toBe('missing permission "run-study-action" for study "study-b"');
    const editor = await serviceKey([["study-a", "edit-participant-data"]]);
    expect((await createTask("study-a", editor.key)).status).toBe(403);
    const bare = await serviceKey();
    expect((await createTask("study-a", bare.key)).status).toBe(403);
    expect(await t.database.db.select().from(tasks).where(eq(tasks.createdBy, bare.subject))).toEqual([]);
  });

  it('401 "expired api key" once the key has expired', async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    expect((await createTask("study-a", svc.key)).status).toBe(200);
    // as if created 91 days ago with the default lifetime of 90
    await t.database.db
      .update(apiKeys)
      .set({ expiresAt: new Date(Date.now() - DAY_MS) })
      .where(eq(apiKeys.id, svc.id));
    await t.settle();
    const res = await createTask("study-a", svc.key);
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toBe("expired api key");
  });

  it('401 "revoked api key" after revocation, at once', async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    expect((await createTask("study-a", svc.key)).status).toBe(200);
    await revokeApiKey(t.database.db, svc.id, "test", new Date());
    const res = await createTask("study-a", svc.key);
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toBe("revoked api key");
  });

  it('401 "invalid api key" for unknown, malformed and empty keys', async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    for (const key of [`sf_${"A".repeat(43)}`, svc.key.slice(0, -2), "x", "", `Bearer ${svc.key}`, svc.key.slice(3)]) {
      const res = await createTask("study-a", key);
      expect(res.status, JSON.stringify(key)).toBe(401);
      expect(await errorOf(res)).toBe("invalid api key");
    }
  });

  it("400 when both X-API-Key and Authorization are sent, even if both are valid", async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    const token = await managementToken(t, "root", true);
    const res = await postJson(t, runActions("study-a"), { rules, dryRun: true }, token, "POST", withKey(svc.key));
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("send either an Authorization header or an X-API-Key header, not both");
  });

  it("is never admin, even when its subject is an admin's name", async () => {
    const admin = await managementToken(t, "root", true);
    const researcherKey = await serviceKey([["study-a", "run-study-action"]]);
    const { task } = (await (await createTask("study-a", researcherKey.key)).json()) as { task: { id: string } };
    const url = `${runActions("study-a")}task/${task.id}`;
    expect((await t.app.request(url, { headers: { Authorization: `Bearer ${admin}` } })).status).toBe(200);

    const impostor = await createApiKey(t.database.db, { now: new Date(), subject: "root", createdBy: "test" });
    // an admin may read any task, create tasks and change settings anywhere; this key may not
    expect((await t.app.request(url, { headers: withKey(impostor.key) })).status).toBe(403);
    expect((await createTask("study-a", impostor.key)).status).toBe(403);
    const track = await postJson(
      t,
      "/v1/studies/study-a/track-account",
      { trackAccount: true },
      undefined,
      "PUT",
      withKey(impostor.key),
    );
    expect(track.status).toBe(403);
  });

  it("sees only its own tasks: another subject's task is 403", async () => {
    const owner = await serviceKey([["study-a", "run-study-action"]]);
    const { task } = (await (await createTask("study-a", owner.key)).json()) as { task: { id: string } };
    const colleague = await serviceKey([["study-a", "run-study-action"]]);
    const url = `${runActions("study-a")}task/${task.id}`;
    expect((await t.app.request(url, { headers: withKey(colleague.key) })).status).toBe(403);
    expect((await t.app.request(url, { headers: withKey(owner.key) })).status).toBe(200);
  });

  it("is refused on participant routes (401), with or without a participant token", async () => {
    const svc = await serviceKey([["*", "run-study-action"]]);
    const user = await participantUser(t);
    const enter = "/v1/study-service/events/study-a/enter";
    const body = { profileID: user.profiles[0]!.id };
    const keyOnly = await postJson(t, enter, body, undefined, "POST", withKey(svc.key));
    expect(keyOnly.status).toBe(401);
    expect(await errorOf(keyOnly)).toBe("participant routes take a participant token, not an X-API-Key header");
    expect((await postJson(t, enter, body, user.token, "POST", withKey(svc.key))).status).toBe(401);
    // the participant token alone still works
    expect((await postJson(t, enter, body, user.token)).status).toBe(200);
  });

  it("is not ended by token:revoke of its subject (keys are revoked one by one)", async () => {
    const svc = await serviceKey([["study-a", "run-study-action"]]);
    await revokeSubjectTokens(t.database.db, svc.subject, new Date(Date.now() + 1_000));
    expect((await createTask("study-a", svc.key)).status).toBe(200);
  });
});

describe("service key expiry by the app's clock", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "study-a" });
  });
  afterAll(async () => {
    await t.close();
  });

  it('works until the default 90 days are over, then answers 401 "expired api key"', async () => {
    await grantPermission(t.database.db, "svc-clock", "study-a", "run-study-action");
    const { key } = await createApiKey(t.database.db, { now: new Date(), subject: "svc-clock", createdBy: "test" });
    const create = () =>
      postJson(t, runActions("study-a"), { rules, dryRun: true }, undefined, "POST", { "X-API-Key": key });
    t.setNow(Date.now() + 89 * DAY_MS);
    expect((await create()).status).toBe(200);
    t.setNow(Date.now() + 91 * DAY_MS);
    const res = await create();
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "expired api key" });
  });
});
