import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managementUsers, serviceAccounts } from "@studyflow/db";
import { bearer, managementToken } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

// Management credentials and what they may see: API keys shown once, the management user list
// without e-mail addresses for non-admins.

describe("management credentials", () => {
  let t: TestApp;
  let admin: string;
  let researcher: string;
  let accountId: string;

  const addUser = async (email: string, isAdmin = false) => {
    const [row] = await t.database.db
      .insert(managementUsers)
      .values({ provider: "ms-entra", sub: `sub-${email}`, email, username: email.split("@")[0]!, isAdmin })
      .returning();
    return row!;
  };
  const um = (path: string) => `/v1/user-management${path}`;
  const get = (path: string, headers: Record<string, string>) => t.app.request(um(path), { headers });

  /** Every row of every table of the app's database, as text: where a secret could be kept. */
  const everyRowAsText = async (): Promise<string> => {
    const tables = await t.database.db.execute<{ table_name: string }>(
      sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    const texts: string[] = [];
    for (const { table_name } of tables) {
      const rows = await t.database.db.execute<{ row: string }>(
        sql`select t::text as row from ${sql.identifier(table_name)} t`,
      );
      texts.push(...rows.map((row) => row.row));
    }
    return texts.join("\n");
  };

  beforeAll(async () => {
    t = await createTestApp();
    const root = await addUser("root@example.org", true);
    admin = await managementToken(t, root.id, true);
    researcher = await managementToken(t, (await addUser("ana@example.org")).id);
    await addUser("ben@example.org");
    const [account] = await t.database.db
      .insert(serviceAccounts)
      .values({ label: "nightly export", createdBy: root.id })
      .returning();
    accountId = account!.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("service-account API keys: shown once, at creation", () => {
    it("answers the key in the creation only; the list shows a hint; the database keeps nothing that gives it back", async () => {
      const created = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: { ...bearer(admin), "content-type": "text/plain;charset=UTF-8" },
        body: JSON.stringify({}),
      });
      expect(created.status).toBe(200);
      expect(created.headers.get("cache-control")).toBe("no-store");
      const { apiKey } = (await created.json()) as { apiKey: { id: string; key: string } };
      expect(apiKey.key).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
      const secretPart = apiKey.key.slice(11);

      // the key works
      expect((await get("/management-users", { "x-api-key": apiKey.key })).status).toBe(200);

      // listed, by admins, with its first characters only, in the field case-admin shows
      const listed = await get(`/service-accounts/${accountId}/api-keys`, bearer(admin));
      expect(listed.status).toBe(200);
      const listText = await listed.text();
      expect(listText).not.toContain(secretPart);
      const { apiKeys } = JSON.parse(listText) as { apiKeys: { id: string; key: string }[] };
      expect(apiKeys).toEqual([expect.objectContaining({ id: apiKey.id, key: `${apiKey.key.slice(0, 11)}…` })]);

      // no sealed copy, no column for one, nothing in any row of any table (audit log included)
      const columns = await t.database.db.execute<{ column_name: string }>(
        sql`select column_name from information_schema.columns where table_name = 'api_keys'`,
      );
      expect(columns.map((column) => column.column_name)).not.toContain("key_enc");
      expect(await everyRowAsText()).not.toContain(secretPart);
    });

    it("refuses non-admins creating or listing keys (403), writing nothing", async () => {
      const before = await everyRowAsText();
      const made = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: bearer(researcher),
        body: "{}",
      });
      expect(made.status).toBe(403);
      expect(await made.json()).toEqual({ error: expect.stringMatching(/admin/) });
      expect((await get(`/service-accounts/${accountId}/api-keys`, bearer(researcher))).status).toBe(403);
      expect(await everyRowAsText()).toBe(before);
    });
  });

  describe("the management user list", () => {
    it("gives admins every field", async () => {
      const res = await get("/management-users", bearer(admin));
      expect(res.status).toBe(200);
      const { users } = (await res.json()) as { users: Record<string, unknown>[] };
      expect(users).toHaveLength(3);
      expect(users.find((user) => user.email === "root@example.org")).toMatchObject({
        username: "root",
        provider: "ms-entra",
        sub: "sub-root@example.org",
        isAdmin: true,
        createdAt: expect.stringMatching(/^\d{4}-/),
      });
      expect(users.map((user) => user.email).sort()).toEqual([
        "ana@example.org",
        "ben@example.org",
        "root@example.org",
      ]);
    });

    it("gives a non-admin and a service account's key only id, username and image: no e-mail, provider or admin flag", async () => {
      const made = await t.app.request(um(`/service-accounts/${accountId}/api-keys`), {
        method: "POST",
        headers: bearer(admin),
        body: "{}",
      });
      const { apiKey } = (await made.json()) as { apiKey: { key: string } };
      for (const headers of [bearer(researcher), { "x-api-key": apiKey.key }]) {
        const res = await get("/management-users", headers);
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).not.toContain("@example.org");
        expect(text).not.toContain("ms-entra");
        const { users } = JSON.parse(text) as { users: Record<string, unknown>[] };
        expect(users).toHaveLength(3);
        for (const user of users) expect(Object.keys(user).sort()).toEqual(["id", "imageUrl", "username"]);
        // what case-admin's study permission picker sorts and shows
        expect(users.map((user) => user.username).sort()).toEqual(["ana", "ben", "root"]);
      }
      expect((await get("/management-users", {})).status).toBe(401);
    });
  });
});
