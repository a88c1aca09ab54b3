import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyRules } from "@studyflow/db";
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

const firstRules = [onEvent("ENTER", call("DRAW_STUDY_CODE_AS_LINKING_CODE", str("kit-codes"), str("kit")))];
const secondRules = [
  ...firstRules,
  onEvent("ENTER", call("UPDATE_FLAG", str("kitRequested"), str("yes"))),
  onEvent("LEAVE", call("UPDATE_FLAG", str("kitReturned"), str("pending"))),
];

describe("rules versions: /v1/studies/{studyKey}/rules", () => {
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = "/v1/studies/flu-watch/rules";
  const post = (rules: unknown, token = manager.token, studyKey = "flu-watch") =>
    postJson(t, `/v1/studies/${studyKey}/rules`, { rules }, token);
  const get = (path: string, token = manager.token) => t.app.request(path, { headers: bearer(token) });
  const versionCount = async () =>
    (await t.database.db.select().from(studyRules).where(eq(studyRules.studyKey, "flu-watch"))).length;

  beforeAll(async () => {
    t = await createTestApp();
    study = await setupStudy(t, { key: "flu-watch", rules: firstRules });
    await setupStudy(t, { key: "diet-study" });
    manager = await researcher(t, "flu-watch", "manage-rules");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("stores a new version (200 as case-backend answers, audited), which participant events run at once", async () => {
    const res = await post(secondRules);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      message: "new study rules version published",
      version: 2,
      uploadedBy: manager.subject,
      uploadedAt: expect.any(String),
      ruleCount: 3,
    });
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    const enter = await postJson(t, "/v1/study-service/events/flu-watch/enter", { profileID }, user.token);
    expect(enter.status).toBe(200);
    const participant = await readParticipant(t.database.db, "flu-watch", participantIdOf(study, profileID));
    expect(participant?.flags).toEqual({ kitRequested: "yes" });
    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "rules.set"));
    expect(audit.map((e) => [e.actor, e.target, e.details])).toEqual([
      ["test", "1", { version: 1, ruleCount: 1 }],
      [manager.subject, "2", { version: 2, ruleCount: 3 }],
    ]);
  });

  it("lists the versions newest first and fetches one by number or as current", async () => {
    const list = await get(base);
    expect(list.status).toBe(200);
    expect((await list.json()).versions).toEqual([
      { version: 2, uploadedBy: manager.subject, uploadedAt: expect.any(String), ruleCount: 3 },
      { version: 1, uploadedBy: "test", uploadedAt: expect.any(String), ruleCount: 1 },
    ]);
    const first = await get(`${base}/1`);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      version: 1,
      uploadedBy: "test",
      uploadedAt: expect.any(String),
      rules: firstRules,
    });
    expect((await (await get(`${base}/current`)).json()).rules).toEqual(secondRules);
  });

  it("404 for a version that does not exist and for current before any upload; empty list then", async () => {
    const missing = await get(`${base}/7`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'rules version 7 not found for study "flu-watch"' });
    const none = await get("/v1/studies/diet-study/rules/current", admin);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ error: 'study "diet-study" has no rules yet' });
    expect(await (await get("/v1/studies/diet-study/rules", admin)).json()).toEqual({ versions: [] });
  });

  it("400 naming the JSON path for invalid rules, and for a bad version, storing nothing", async () => {
    const cases: [unknown, RegExp][] = [
      [[call("NO_SUCH_ACTION")], /^invalid rules: rules\[0\]/],
      [
        [firstRules[0], onEvent("ENTER", call("UPDATE_FLAG", str("only-one-argument")))],
        /^invalid rules: rules\[1\]\.data\[1\]\.exp/,
      ],
      [[{ data: [] }], /^invalid rules: rules\[0\]/],
      ["not an array", /^body\.rules: /],
      [Array.from({ length: 1_001 }, () => firstRules[0]), /^body\.rules: at most 1000 rules/],
    ];
    for (const [rules, message] of cases) {
      const res = await post(rules);
      expect(res.status, JSON.stringify(rules).slice(0, 60)).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect((await postJson(t, base, {}, manager.token)).status).toBe(400);
    for (const version of ["0", "latest", "1.5", "-1", "99999999999"]) {
      const res = await get(`${base}/${version}`);
      expect(res.status, version).toBe(400);
      expect((await res.json()).error).toMatch(/param\.version: version must be a version number or current/);
    }
    expect(await versionCount()).toBe(2);
  });

  it("401 without a token, 403 without manage-rules or with it for another study, 404 unknown study", async () => {
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["list", (token, studyKey) => get(`/v1/studies/${studyKey}/rules`, token)],
      ["get", (token, studyKey) => get(`/v1/studies/${studyKey}/rules/current`, token)],
      ["post", (token, studyKey) => post(firstRules, token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "run-study-action");
    const otherStudy = await researcher(t, "diet-study", "manage-rules");
    for (const [name, request] of routes) {
      expect((await request("", "flu-watch")).status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect((await forbidden.json()).error).toMatch(
        /^missing permission "(manage-rules|update-study-rules)" for study "flu-watch"$/,
      );
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    expect(await versionCount()).toBe(2);
  });
});
