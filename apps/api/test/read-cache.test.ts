import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, permissions, type DbHandle } from "@studyflow/db";
import { createApiKey, currentTokenVersion, revokeApiKey, revokeSubjectTokens } from "@studyflow/domain/access";
import { ReadCache, listenForCacheChanges, type CacheListener } from "@studyflow/domain/cache";
import { revokeUserSessions } from "@studyflow/domain/participant-sessions";
import { systemClock } from "@studyflow/domain/foundation";
import { grantPermission, setStudyRules } from "@studyflow/domain/study-setup";
import { createApp } from "../src/app";
import { call, exp, insertParticipant, managementToken, onEvent, participantUser, setupStudy, str } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * The read cache across replicas: two apps on one database, each with its own pool, cache and
 * listener, as two API processes. A change made through one (or by SQL, as an operator would)
 * must take effect on the other within a second.
 */
describe("read cache: changes reach every replica", () => {
  let t: TestApp;
  let replica: { app: ReturnType<typeof createApp>; cache: ReadCache; db: DbHandle; listener: CacheListener };
  const STUDY = "cached";
  const flagRules = (value: string) => [onEvent("SUBMIT", call("UPDATE_FLAG", str("version"), str(value)))];

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: STUDY, rules: flagRules("one") });
    const db = createDb(t.database.url, { max: 4 });
    const cache = new ReadCache({ clock: systemClock });
    const listener = listenForCacheChanges(t.database.url, cache);
    const app = createApp({ ...t.deps, database: db, readCache: cache });
    replica = { app, cache, db, listener };
    await cache.settle(db.sql);
  });
  afterAll(async () => {
    await replica.listener.stop();
    await replica.db.close();
    await t.close();
  });

  const submit = (app: ReturnType<typeof createApp>, token: string, participantId: string) =>
    app.request(`/v1/studies/${STUDY}/participants/${participantId}/responses`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ key: "weekly", responses: [] }),
    });

  /** Milliseconds until `check` holds on the replica, polling every 10 ms; fails after 1 s. */
  async function msUntil(check: () => Promise<boolean>): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < 1_000) {
      if (await check()) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error("the change did not reach the replica within 1 s");
  }

  async function researcherWithGrant(subject: string) {
    await grantPermission(t.database.db, subject, STUDY, "edit-participant-data");
    const participant = await insertParticipant(t.database.db, { studyKey: STUDY, participantId: `p-${subject}` });
    return { token: await managementToken(t, subject), participantId: participant.participantId };
  }

  it("a permission removed by SQL on the database stops working on the replica within 1 s", async () => {
    const { token, participantId } = await researcherWithGrant("remover");
    expect((await submit(replica.app, token, participantId)).status).toBe(200);
    // the replica answers from memory now: the grant is kept
    expect(replica.cache.size("grants")).toBeGreaterThan(0);
    await t.database.db
      .delete(permissions)
      .where(and(eq(permissions.subjectId, "remover"), eq(permissions.studyKey, STUDY)));
    const ms = await msUntil(async () => (await submit(replica.app, token, participantId)).status === 403);
    expect(ms).toBeLessThan(1_000);
  });

  it("a token revocation made through the other replica's domain stops the token within 1 s", async () => {
    const { token, participantId } = await researcherWithGrant("revoked-researcher");
    expect((await submit(replica.app, token, participantId)).status).toBe(200);
    await revokeSubjectTokens(t.database.db, "revoked-researcher", new Date(Date.now() + 1_000));
    // the replica that made the change forgets at once, before the announcement arrives
    expect((await submit(t.app, token, participantId)).status).toBe(401);
    const ms = await msUntil(async () => (await submit(replica.app, token, participantId)).status === 401);
    expect(ms).toBeLessThan(1_000);
  });

  it("a revoked service key stops on the replica within 1 s", async () => {
    await grantPermission(t.database.db, "svc-cached", STUDY, "edit-participant-data");
    const participant = await insertParticipant(t.database.db, { studyKey: STUDY, participantId: "p-svc" });
    const { key, apiKey } = await createApiKey(t.database.db, {
      now: new Date(),
      subject: "svc-cached",
      createdBy: "test",
    });
    const viaKey = () =>
      replica.app.request(`/v1/studies/${STUDY}/participants/${participant.participantId}/responses`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": key },
        body: JSON.stringify({ key: "weekly", responses: [] }),
      });
    // The grant above is announced; arriving while the key is loaded it would keep the load from
    // being kept (any announcement during a load does): let it arrive first.
    await replica.cache.settle(replica.db.sql);
    expect((await viaKey()).status).toBe(200);
    // writing last_used_at (at most once a minute) announces nothing: the key stays kept
    await replica.cache.settle(replica.db.sql);
    expect(replica.cache.size("api-key")).toBeGreaterThan(0);
    await revokeApiKey(t.database.db, apiKey.id, "test", new Date());
    const ms = await msUntil(async () => (await viaKey()).status === 401);
    expect(ms).toBeLessThan(1_000);
  });

  it("new rules and a changed study setting apply on the replica within 1 s", async () => {
    const { token, participantId } = await researcherWithGrant("rules-watcher");
    const flagAfterSubmit = async () =>
      (
        (await (await submit(replica.app, token, participantId)).json()) as {
          participant: { flags: { version?: string } };
        }
      ).participant.flags.version;
    expect(await flagAfterSubmit()).toBe("one");
    expect(replica.cache.size("rules")).toBeGreaterThan(0);
    await setStudyRules(t.database.db, STUDY, flagRules("two"), "test");
    expect(await msUntil(async () => (await flagAfterSubmit()) === "two")).toBeLessThan(1_000);

    // strict rules, set by SQL: a failing rule now rejects the event on the replica (422)
    await setStudyRules(
      t.database.db,
      STUDY,
      [
        onEvent(
          "SUBMIT",
          call("UPDATE_FLAG", str("x"), exp(call("getResponseValueAsNum", str("missing"), str("missing")))),
        ),
      ],
      "test",
    );
    await t.database.db.execute(
      sql`update studies set config = config || '{"strictRules": true}'::jsonb where key = ${STUDY}`,
    );
    const ms = await msUntil(async () => (await submit(replica.app, token, participantId)).status === 422);
    expect(ms).toBeLessThan(1_000);
    await setStudyRules(t.database.db, STUDY, flagRules("one"), "test");
    await t.database.db.execute(sql`update studies set config = config - 'strictRules' where key = ${STUDY}`);
  });

  it("a sign-in's last login leaves a participant's token version cached; a token version bump stops the token within 1 s", async () => {
    const user = await participantUser(t);
    const getUser = () => replica.app.request("/v1/user", { headers: { Authorization: `Bearer ${user.token}` } });
    expect((await getUser()).status).toBe(200);
    const kept = replica.cache.size("user");
    expect(kept).toBeGreaterThan(0);
    // what every sign-in writes, by SQL on the primary: nothing is announced
    await t.database.db.execute(sql`update users set last_login_at = now() where id = ${user.user.id}`);
    await replica.cache.settle(replica.db.sql);
    expect(replica.cache.size("user")).toBe(kept);
    await t.database.db.execute(sql`update users set token_version = token_version + 1 where id = ${user.user.id}`);
    expect(await msUntil(async () => (await getUser()).status === 401)).toBeLessThan(1_000);
  });

  it("a change a transaction forgets is forgotten when it commits, not only when its announcement arrives", async () => {
    // a cache that hears no announcements: only what the process forgets itself reaches it
    const deaf = new ReadCache({ clock: systemClock });
    deaf.listeningStarted();
    const db = createDb(t.database.url, { max: 2 });
    const app = createApp({ ...t.deps, database: db, readCache: deaf });
    try {
      const user = await participantUser(t);
      const version = () => currentTokenVersion(db.db, user.user.id);
      const getUser = () => app.request("/v1/user", { headers: { Authorization: `Bearer ${user.token}` } });
      expect((await getUser()).status).toBe(200);
      const before = await version();
      expect(deaf.size("user")).toBe(1);
      // the revocation runs in a savepoint of an outer transaction, as the account's deletion does
      await db.db.transaction((tx) =>
        tx.transaction((savepoint) => revokeUserSessions(savepoint, user.user.id, "operator", { now: new Date() })),
      );
      expect(deaf.size("user")).toBe(0);
      expect(await version()).toBe(before! + 1);
      expect((await getUser()).status).toBe(401);
      // a rolled-back change is forgotten too; the database's value is read again
      await expect(
        db.db.transaction(async (tx) => {
          await revokeUserSessions(tx, user.user.id, "operator", { now: new Date() });
          throw new Error("rolled back");
        }),
      ).rejects.toThrow("rolled back");
      expect(await version()).toBe(before! + 1);
    } finally {
      await db.close();
    }
  });

  it("a study set inactive refuses events on the replica at once: its status is read under the event's lock", async () => {
    const { token, participantId } = await researcherWithGrant("status-watcher");
    expect((await submit(replica.app, token, participantId)).status).toBe(200);
    expect(replica.cache.size("study")).toBeGreaterThan(0);
    await t.database.db.execute(sql`update studies set status = 'inactive' where key = ${STUDY}`);
    // no waiting for the announcement
    expect((await submit(replica.app, token, participantId)).status).toBe(409);
    await t.database.db.execute(sql`update studies set status = 'active' where key = ${STUDY}`);
  });

  it("keeps nothing while its listening connection is lost, and keeps working after it listens again", async () => {
    const { token, participantId } = await researcherWithGrant("listener-loss");
    expect((await submit(replica.app, token, participantId)).status).toBe(200);
    expect(replica.cache.size("grants")).toBeGreaterThan(0);
    const terminated = await t.database.sql<{ pid: number }[]>`
      select pg_terminate_backend(pid) as pid from pg_stat_activity
      where application_name = 'studyflow-cache-listener' and datname = current_database()`;
    expect(terminated.length).toBe(2); // both replicas' listeners
    await expect.poll(() => replica.cache.size("grants"), { timeout: 1_000 }).toBe(0);
    // while it cannot listen, a change is seen at once: nothing is served from memory
    await t.database.db.delete(permissions).where(eq(permissions.subjectId, "listener-loss"));
    expect((await submit(replica.app, token, participantId)).status).toBe(403);
    await grantPermission(t.database.db, "listener-loss", STUDY, "edit-participant-data");
    // listening again within its retry delay; then announcements work as before
    await expect
      .poll(
        async () => {
          await submit(replica.app, token, participantId);
          return replica.cache.size("grants");
        },
        { timeout: 5_000, interval: 100 },
      )
      .toBeGreaterThan(0);
    await t.database.db.delete(permissions).where(eq(permissions.subjectId, "listener-loss"));
    expect(await msUntil(async () => (await submit(replica.app, token, participantId)).status === 403)).toBeLessThan(
      1_000,
    );
  });
});

describe("ReadCache", () => {
  it("does not keep a value loaded while an announcement arrived: it may predate the change", async () => {
    const cache = new ReadCache({ clock: systemClock });
    cache.listeningStarted();
    let release: () => void = () => undefined;
    const loading = cache.get("study", "s", () => new Promise<string>((resolve) => (release = () => resolve("old"))));
    cache.receive("study:s");
    release();
    expect(await loading).toBe("old");
    expect(cache.size("study")).toBe(0);
    expect(await cache.get("study", "s", () => Promise.resolve("new"))).toBe("new");
    expect(cache.size("study")).toBe(1);
  });

  it("keeps nothing before it listens, forgets everything on an unknown topic, and expires entries", async () => {
    let now = 0;
    const cache = new ReadCache({ maxAgeMs: 1_000, clock: () => now });
    await cache.get("grants", "a", () => Promise.resolve(["x"]));
    expect(cache.size("grants")).toBe(0);
    cache.listeningStarted();
    await cache.get("grants", "a", () => Promise.resolve(["x"]));
    await cache.get("rules", "b", () => Promise.resolve({ current: null }));
    cache.receive("future-topic:anything");
    expect(cache.size("grants") + cache.size("rules")).toBe(0);
    await cache.get("grants", "a", () => Promise.resolve(["x"]));
    now = 1_000;
    expect(await cache.get("grants", "a", () => Promise.resolve(["y"]))).toEqual(["y"]);
  });

  it("bounds each topic, dropping the entry kept longest", async () => {
    const cache = new ReadCache({ clock: systemClock, maxEntriesPerTopic: 2 });
    cache.listeningStarted();
    for (const key of ["a", "b", "c"]) await cache.get("profile", key, () => Promise.resolve(key));
    expect(cache.size("profile")).toBe(2);
    expect(await cache.get("profile", "a", () => Promise.resolve("reloaded"))).toBe("reloaded");
  });
});
