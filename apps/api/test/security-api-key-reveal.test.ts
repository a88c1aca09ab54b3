import { and, eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, auditLog, managementUsers, serviceAccounts } from "@studyflow/db";
import { API_KEY_REVEAL_WINDOW_MS, createServiceAccountApiKey, revokeApiKey } from "@studyflow/domain/access";
import { bearer, managementToken } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

// A service-account API key is shown to its creator once: in the answer that creates it and, within
// the reveal window, in the creator's first key list (case-admin's "Generate new API key" dialog
// discards the creation's answer and shows and copies the key from the list it loads right after).

/** The app's clock in each test starts here: a minute ahead, within the lifetime of the tests' management tokens. */
const T0 = Math.floor(Date.now() / 1000) * 1000 + 60_000;
const KEY_PATTERN = /^sf_[A-Za-z0-9_-]{43}$/;

interface ListedKey {
  id: string;
  serviceUserId: string;
  key: string;
}

describe("service-account API keys are shown to their creator once", () => {
  let t: TestApp;
  let ritaId: string;
  let rita: string;
  let maxId: string;
  let max: string;
  let researcher: string;
  let accountId: string;

  const um = (path: string) => `/v1/user-management${path}`;
  const addUser = async (email: string, isAdmin: boolean) => {
    const [row] = await t.database.db
      .insert(managementUsers)
      .values({ provider: "ms-entra", sub: `sub-${email}`, email, username: email.split("@")[0]!, isAdmin })
      .returning();
    return row!.id;
  };

  /** case-admin's createServiceAccountAPIKey. */
  const createKey = async (token: string, account = accountId) => {
    const res = await t.app.request(um(`/service-accounts/${account}/api-keys`), {
      method: "POST",
      headers: { ...bearer(token), "content-type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({}),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { apiKey } = (await res.json()) as { apiKey: ListedKey };
    expect(apiKey.key).toMatch(KEY_PATTERN);
    return apiKey;
  };
  /** case-admin's getServiceAccountAPIKeys. */
  const listKeys = async (token: string, account = accountId) => {
    const res = await t.app.request(um(`/service-accounts/${account}/api-keys`), { headers: bearer(token) });
    const body = (await res.json()) as { apiKeys: ListedKey[]; error?: string };
    return { status: res.status, cacheControl: res.headers.get("cache-control"), body };
  };
  const shownKey = (listed: { body: { apiKeys: ListedKey[] } }, id: string) =>
    listed.body.apiKeys.find((key) => key.id === id)?.key;
  const hint = (key: string) => `${key.slice(0, 11)}…`;
  const rowOf = async (id: string) => {
    const [row] = await t.database.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    return row!;
  };
  const reveals = (id: string) =>
    t.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "api-key.reveal"), eq(auditLog.target, id)));

  beforeAll(async () => {
    t = await createTestApp();
    ritaId = await addUser("rita@example.org", true);
    rita = await managementToken(t, ritaId, true);
    maxId = await addUser("max@example.org", true);
    max = await managementToken(t, maxId, true);
    researcher = await managementToken(t, await addUser("ana@example.org", false));
    const [account] = await t.database.db
      .insert(serviceAccounts)
      .values({ label: "nightly export", createdBy: ritaId })
      .returning();
    accountId = account!.id;
  });
  afterEach(() => {
    t.setNow(Date.now());
  });
  afterAll(async () => {
    await t?.close();
  });

  it("shows the key whole in the creator's first list (no-store, audited), which authenticates; then only its hint", async () => {
    t.setNow(T0);
    const older = await createKey(rita);
    await listKeys(rita); // takes the older key's turn
    const made = await createKey(rita);
    const sealed = await rowOf(made.id);
    // kept sealed, not in clear, for the window only
    expect(sealed.revealSealed).not.toBeNull();
    expect(sealed.revealSealed!.toString("latin1")).not.toContain(made.key.slice(11));
    expect(sealed.revealUntil?.getTime()).toBe(T0 + API_KEY_REVEAL_WINDOW_MS);
    expect(API_KEY_REVEAL_WINDOW_MS).toBe(10 * 60_000);

    t.setNow(T0 + 2_000);
    const first = await listKeys(rita);
    expect(first.status).toBe(200);
    expect(first.cacheControl).toBe("no-store");
    expect(shownKey(first, made.id)).toBe(made.key);
    expect(shownKey(first, older.id)).toBe(hint(older.key));
    // what case-admin's copy button copies works as the service account
    const asAccount = await t.app.request("/v1/auth/permissions", {
      headers: { "X-API-Key": shownKey(first, made.id)!, "X-Instance-ID": "studyflow" },
    });
    expect(asAccount.status).toBe(200);
    expect(await asAccount.json()).toMatchObject({ isAdmin: false });

    // the copy went with that list, which is audited without the key
    expect(await rowOf(made.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    const audited = await reveals(made.id);
    expect(audited).toEqual([
      expect.objectContaining({
        actor: ritaId,
        details: { serviceAccountId: accountId, keyPrefix: made.key.slice(0, 11) },
      }),
    ]);
    expect(JSON.stringify(audited)).not.toContain(made.key.slice(11));

    const second = await listKeys(rita);
    expect(second.status).toBe(200);
    expect(shownKey(second, made.id)).toBe(hint(made.key));
    expect(second.cacheControl).not.toBe("no-store");
    expect(JSON.stringify(second.body)).not.toContain(made.key.slice(11));
    expect(await reveals(made.id)).toHaveLength(1);
  });

  it("shows another admin the hint, leaving the creator's turn, which comes once", async () => {
    t.setNow(T0);
    const made = await createKey(rita);
    t.setNow(T0 + 60_000);
    for (let i = 0; i < 2; i += 1) {
      const other = await listKeys(max);
      expect(other.status).toBe(200);
      expect(shownKey(other, made.id)).toBe(hint(made.key));
      expect(other.cacheControl).not.toBe("no-store");
    }
    expect((await rowOf(made.id)).revealSealed).not.toBeNull();
    expect(await reveals(made.id)).toEqual([]);

    // a non-admin is refused and takes nothing either
    const refused = await listKeys(researcher);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: expect.stringMatching(/admin/) });
    expect((await rowOf(made.id)).revealSealed).not.toBeNull();

    t.setNow(T0 + API_KEY_REVEAL_WINDOW_MS - 1_000);
    expect(shownKey(await listKeys(rita), made.id)).toBe(made.key);
    expect(shownKey(await listKeys(max), made.id)).toBe(hint(made.key));
    expect(shownKey(await listKeys(rita), made.id)).toBe(hint(made.key));
    expect(await reveals(made.id)).toHaveLength(1);
  });

  it("after the window shows only the hint, and the list erases the copy, whoever lists", async () => {
    t.setNow(T0);
    const mine = await createKey(rita);
    const maxs = await createKey(max);

    t.setNow(T0 + API_KEY_REVEAL_WINDOW_MS);
    const late = await listKeys(rita);
    expect(late.status).toBe(200);
    expect(shownKey(late, mine.id)).toBe(hint(mine.key));
    expect(late.cacheControl).not.toBe("no-store");
    // both copies past their window are gone, Max's too though Rita listed
    expect(await rowOf(mine.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    expect(await rowOf(maxs.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    expect(shownKey(await listKeys(max), maxs.id)).toBe(hint(maxs.key));
    expect([...(await reveals(mine.id)), ...(await reveals(maxs.id))]).toEqual([]);
  });

  it("reveals at most once to two lists of the creator at the same time", async () => {
    t.setNow(T0);
    const made = await createKey(rita);
    t.setNow(T0 + 1_000);
    const lists: Promise<Awaited<ReturnType<typeof listKeys>>>[] = [];
    let waitedTogether = 0;
    // Hold the key's row while both lists start, so both are in their transaction at once.
    await t.database.sql.begin(async (tx) => {
      await tx`select id from api_keys where id = ${made.id} for update`;
      lists.push(listKeys(rita), listKeys(rita));
      const deadline = Date.now() + 10_000;
      for (;;) {
        // asked on another connection: within a transaction pg_stat_activity is one snapshot
        const [waiting] = await t.database.sql<{ count: number }[]>`
          select count(*)::int as count from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
        waitedTogether = waiting!.count;
        if (waitedTogether >= 2 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    expect(waitedTogether).toBe(2);
    const answers = await Promise.all(lists);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const shown = answers.map((answer) => shownKey(answer, made.id));
    expect(shown.filter((key) => key === made.key)).toHaveLength(1);
    expect(shown.filter((key) => key === hint(made.key))).toHaveLength(1);
    expect(await reveals(made.id)).toHaveLength(1);
    expect((await rowOf(made.id)).revealSealed).toBeNull();
  });

  it("never shows a revoked key: revoking erases the copy", async () => {
    t.setNow(T0);
    const made = await createKey(rita);
    await revokeApiKey(t.database.db, made.id, ritaId, new Date(T0 + 1_000));
    expect(await rowOf(made.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    t.setNow(T0 + 2_000);
    expect(shownKey(await listKeys(rita), made.id)).toBe(hint(made.key));
    expect(await reveals(made.id)).toEqual([]);
  });

  it("opens a copy only in its own row: one moved to another key shows the hint and is erased", async () => {
    t.setNow(T0);
    const first = await createKey(rita);
    const second = await createKey(rita);
    // the first key's copy written into the second key's row (as by someone with database access)
    await t.database.db.execute(
      sql`update api_keys set reveal_sealed = (select reveal_sealed from api_keys where id = ${first.id})
          where id = ${second.id}`,
    );
    t.setNow(T0 + 1_000);
    const listed = await listKeys(rita);
    expect(listed.status).toBe(200);
    expect(shownKey(listed, second.id)).toBe(hint(second.key));
    expect(shownKey(listed, first.id)).toBe(first.key);
    expect(JSON.stringify(listed.body).split(first.key)).toHaveLength(2);
    expect(await rowOf(second.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    expect(await reveals(second.id)).toEqual([]);
  });

  it("keeps no copy of a key made without the API's box (the CLI's): its creator's list shows the hint", async () => {
    t.setNow(T0);
    // as service-account:key:create calls it: no revealBox
    const made = await createServiceAccountApiKey(t.database.db, {
      serviceAccountId: accountId,
      createdBy: ritaId,
      now: new Date(T0),
    });
    expect(made.key).toMatch(KEY_PATTERN);
    expect(await rowOf(made.apiKey.id)).toMatchObject({ revealSealed: null, revealUntil: null });
    expect(shownKey(await listKeys(rita), made.apiKey.id)).toBe(hint(made.key));
    expect(await reveals(made.apiKey.id)).toEqual([]);
  });

  it("answers an unknown or malformed account 404 and takes no copy", async () => {
    t.setNow(T0);
    const made = await createKey(rita);
    for (const account of [crypto.randomUUID(), "not-an-id"]) {
      const listed = await listKeys(rita, account);
      expect(listed.status).toBe(404);
      expect(listed.body).toEqual({ error: expect.any(String) });
    }
    expect((await rowOf(made.id)).revealSealed).not.toBeNull();
    expect(shownKey(await listKeys(rita), made.id)).toBe(made.key);
  });
});
