import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, managementToken, postJson, researcher, setupStudy } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

type Entry = { id: string; actor: string; action: string; target: string | null; details: object; at: string };

describe("GET /v1/studies/{studyKey}/audit-log", () => {
  let t: TestApp;
  let auditor: string;
  let admin: string;
  const list = (query = "", token = auditor, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/audit-log${query}`, { headers: bearer(token) });
  /** Every entry, following the cursors with pages of `limit`. */
  const all = async (limit: number, studyKey = "flu-watch") => {
    const entries: Entry[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, auditor, studyKey);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { entries: Entry[]; nextCursor: string | null };
      entries.push(...body.entries);
      cursor = body.nextCursor;
    } while (cursor);
    return entries;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "diet-study" });
    ({ token: auditor } = await researcher(t, "*", "read-audit-log"));
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("shows who changed what and when, newest first, across the kinds of configuration", async () => {
    const ana = await researcher(t, "flu-watch", "*");
    await postJson(t, "/v1/studies/flu-watch", { name: { en: "Flu watch" } }, ana.token, "PATCH");
    await postJson(t, "/v1/studies/flu-watch/code-lists/kit-codes/codes", { codes: ["KIT-0001"] }, ana.token);
    const define = (studyKey: string, key: string, value: number) =>
      postJson(t, `/v1/studies/${studyKey}/variables`, { variableDef: { key, type: "int", value } }, admin);
    await define("flu-watch", "kitStock", 250);
    await define("diet-study", "meals", 3);

    const res = await list();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { entries: Entry[]; nextCursor: string | null };
    expect(body.nextCursor).toBeNull();
    expect(body.entries.map((e: Entry) => [e.actor, e.action, e.target])).toEqual([
      ["root", "variable.define", "kitStock"],
      [ana.subject, "code-list.add", "kit-codes"],
      [ana.subject, "study.props.update", null],
    ]);
    expect(body.entries[0]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      actor: "root",
      action: "variable.define",
      target: "kitStock",
      details: { type: "int", value: 250 },
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });

  it("pages with a cursor without skipping or repeating entries recorded within one millisecond", async () => {
    // microseconds apart, and two at the very same instant: a cursor rounded to milliseconds would lose some
    const instants = [
      "2026-01-05T10:00:00.000100Z",
      "2026-01-05T10:00:00.000200Z",
      "2026-01-05T10:00:00.000200Z",
      "2026-01-05T10:00:00.000900Z",
      "2026-01-05T10:00:00.001000Z",
    ];
    for (const [i, at] of instants.entries()) {
      await t.database.sql`
        insert into audit_log (study_key, actor, action, target, at)
        values ('diet-study', 'importer', 'code-list.add', ${`list-${i}`}, ${at}::timestamptz)`;
    }
    const everything = await all(100, "diet-study");
    for (const limit of [1, 2, 3]) {
      const paged = await all(limit, "diet-study");
      expect(paged.map((e) => e.id)).toEqual(everything.map((e) => e.id));
    }
    expect(everything.filter((e) => e.actor === "importer").map((e) => e.target)).toEqual([
      "list-4",
      "list-3",
      "list-2",
      "list-1",
      "list-0",
    ]);
  });

  it("400 for a bad limit or cursor, 404 for an unknown study", async () => {
    const forged = (at: string) => Buffer.from(JSON.stringify([at, 1])).toString("base64url");
    const queries = ["?limit=0", "?limit=1001", "?cursor=abc", `?cursor=${forged("yesterday")}`];
    queries.push(`?cursor=${forged("2026-13-45T00:00:00.000000Z")}`);
    for (const query of queries) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error).toMatch(/limit|cursor/);
    }
    const missing = await list("", admin, "nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
  });

  it("401 without a token, 403 without read-audit-log or with it for another study", async () => {
    expect((await list("", "")).status).toBe(401);
    const editor = await researcher(t, "flu-watch", "update-study-props");
    const forbidden = await list("", editor.token);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ error: 'missing permission "read-audit-log" for study "flu-watch"' });
    const elsewhere = await researcher(t, "diet-study", "read-audit-log");
    expect((await list("", elsewhere.token)).status).toBe(403);
  });
});
