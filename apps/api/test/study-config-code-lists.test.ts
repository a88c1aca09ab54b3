import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyCodeLists } from "@studyflow/db";
import {
  bearer,
  call,
  managementToken,
  onEvent,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** Entering the study draws the household's test kit from the kit-codes list. */
const rules = [onEvent("ENTER", call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("kit-codes"), str("kit")))];

const kitCodes = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `KIT-${String(from + i).padStart(4, "0")}`);

describe("study code lists: /v1/studies/{studyKey}/code-lists", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = "/v1/studies/flu-watch/code-lists";
  const add = (codes: unknown, token = manager.token, list = "kit-codes", studyKey = "flu-watch") =>
    postJson(t, `/v1/studies/${studyKey}/code-lists/${list}/codes`, { codes }, token);
  const get = (path: string, token = manager.token) => t.app.request(path, { headers: bearer(token) });
  const remove = (code: string, token = manager.token, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/code-lists/kit-codes/codes/${encodeURIComponent(code)}`, {
      method: "DELETE",
      headers: bearer(token),
    });
  const codesInDb = async (list = "kit-codes") =>
    (
      await t.database.db
        .select({ code: studyCodeLists.code })
        .from(studyCodeLists)
        .where(and(eq(studyCodeLists.studyKey, "flu-watch"), eq(studyCodeLists.listKey, list)))
        .orderBy(studyCodeLists.id)
    ).map((row) => row.code);

  beforeAll(async () => {
    t = await createTestApp();
    study = await setupStudy(t, { key: "flu-watch", rules });
    await setupStudy(t, { key: "diet-study" });
    manager = await researcher(t, "flu-watch", "manage-code-lists");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("adds codes in order, skips duplicates, and the rules draw them in that order", async () => {
    const res = await add(kitCodes(1, 3));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ added: 3, skipped: [], codeCount: 3 });

    // KIT-0002 is already there; KIT-0004 is given twice; surrounding spaces go
    const again = await add(["KIT-0002", " KIT-0004 ", "KIT-0004", "KIT-0005"]);
    expect(await again.json()).toEqual({ added: 2, skipped: ["KIT-0002", "KIT-0004"], codeCount: 5 });
    expect(await codesInDb()).toEqual(kitCodes(1, 5));

    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    expect((await postJson(t, "/v1/study-service/events/flu-watch/enter", { profileID }, user.token)).status).toBe(200);
    const participant = await readParticipant(t.database.db, "flu-watch", participantIdOf(study, profileID));
    expect(participant?.linkingCodes).toEqual({ kit: "KIT-0001" });
    expect(await codesInDb()).toEqual(kitCodes(2, 4));

    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "code-list.add"));
    expect(audit.map((e) => [e.actor, e.target, e.details])).toEqual([
      [manager.subject, "kit-codes", { added: 3, skipped: 0 }],
      [manager.subject, "kit-codes", { added: 2, skipped: 2 }],
    ]);
  });

  it("lists the study's lists with counts, counts one list, and pages through its codes with a cursor", async () => {
    await add(["WELCOME-A", "WELCOME-B"], manager.token, "welcome-codes");
    const lists = await get(base);
    expect(lists.status).toBe(200);
    expect(await lists.json()).toEqual({
      codeLists: [
        { listKey: "kit-codes", codeCount: 4 },
        { listKey: "welcome-codes", codeCount: 2 },
      ],
    });

    const count = await get(`${base}/kit-codes/count`);
    expect(await count.json()).toEqual({ listKey: "kit-codes", codeCount: 4 });
    expect(await (await get(`${base}/no-such-list/count`)).json()).toEqual({ listKey: "no-such-list", codeCount: 0 });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await get(`${base}/kit-codes/codes${query}`);
      expect(page.status).toBe(200);
      const body = (await page.json()) as { codes: { code: string }[]; nextCursor: string | null };
      seen.push(...body.codes.map((c: { code: string }) => c.code));
      expect(body.codes[0]).toEqual({ code: expect.any(String), addedAt: expect.any(String) });
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(kitCodes(2, 4));
    expect(pages).toBe(2);
    expect(await (await get(`${base}/no-such-list/codes`)).json()).toEqual({ codes: [], nextCursor: null });
  });

  it("removes one code (any characters, percent-encoded) and answers 404 for a code the list does not hold", async () => {
    await add(["KIT 0099/B?#"]);
    const removed = await remove("KIT 0099/B?#");
    expect(removed.status).toBe(204);
    expect(await codesInDb()).not.toContain("KIT 0099/B?#");
    const again = await remove("KIT 0099/B?#");
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({
      error: 'code "KIT 0099/B?#" is not in code list "kit-codes" of study "flu-watch"',
    });
    const [entry] = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "code-list.remove"));
    expect(entry).toMatchObject({ actor: manager.subject, target: "kit-codes", details: { code: "KIT 0099/B?#" } });
  });

  it("400 naming the field for bad codes, lists, limits and cursors, adding nothing", async () => {
    const before = await codesInDb();
    const cases: [unknown, RegExp][] = [
      [[], /body\.codes: give at least one code/],
      ["KIT-1", /body\.codes: /],
      [["KIT-1", "   "], /body\.codes\.1: must not be empty/],
      [["KIT-1", "x".repeat(257)], /body\.codes\.1: is longer than 256 characters/],
      [["KIT-1\nKIT-2"], /body\.codes\.0: must not contain control characters/],
      [["KIT-1", 7], /body\.codes\.1: /],
      [kitCodes(1000, 10_001), /body\.codes: at most 10000 codes per request/],
    ];
    for (const [codes, message] of cases) {
      const res = await add(codes);
      expect(res.status, JSON.stringify(codes).slice(0, 60)).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect((await add(["KIT-1"], manager.token, "bad list")).status).toBe(400);
    expect((await postJson(t, `${base}/kit-codes/codes`, {}, manager.token)).status).toBe(400);
    for (const query of ["?limit=0", "?limit=1001", "?limit=ten", "?cursor=not-a-cursor", "?cursor=WyJhIiwxXQ"]) {
      const res = await get(`${base}/kit-codes/codes${query}`);
      expect(res.status, query).toBe(400);
      expect((await res.json()).error).toMatch(/limit|cursor/);
    }
    expect(await codesInDb()).toEqual(before);
  });

  it("adds the largest request, 10,000 codes, at once", async () => {
    const res = await add(kitCodes(10_000, 10_000), manager.token, "bulk-kits");
    expect(await res.json()).toEqual({ added: 10_000, skipped: [], codeCount: 10_000 });
  });

  it("401 without a token, 403 without manage-code-lists or with it for another study, 404 unknown study", async () => {
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["add", (token, studyKey) => add(["KIT-9000"], token, "kit-codes", studyKey)],
      ["lists", (token, studyKey) => get(`/v1/studies/${studyKey}/code-lists`, token)],
      ["codes", (token, studyKey) => get(`/v1/studies/${studyKey}/code-lists/kit-codes/codes`, token)],
      ["count", (token, studyKey) => get(`/v1/studies/${studyKey}/code-lists/kit-codes/count`, token)],
      ["remove", (token, studyKey) => remove("KIT-0002", token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "manage-study-variables");
    const otherStudy = await researcher(t, "diet-study", "manage-code-lists");
    for (const [name, request] of routes) {
      expect((await request("", "flu-watch")).status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect(await forbidden.json()).toEqual({ error: 'missing permission "manage-code-lists" for study "flu-watch"' });
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    expect(await codesInDb()).toContain("KIT-0002");
    expect(await codesInDb()).not.toContain("KIT-9000");
  });
});
