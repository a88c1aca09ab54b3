import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyVariables } from "@studyflow/db";
import {
  bearer,
  call,
  exp,
  managementToken,
  num,
  onEvent,
  participantUser,
  postJson,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/** Every household that enters takes one test kit out of stock. */
const rules = [
  onEvent(
    "ENTER",
    call(
      "UPDATE_STUDY_VARIABLE_INT",
      str("kitStock"),
      exp(call("sum", exp(call("getStudyVariableInt", str("kitStock"))), num(-1))),
    ),
  ),
];

describe("study variables: /v1/studies/{studyKey}/variables", () => {
  let t: TestApp;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = "/v1/studies/flu-watch/variables";
  const put = (key: string, body: unknown, token = manager.token, studyKey = "flu-watch") =>
    postJson(t, `/v1/studies/${studyKey}/variables/${key}`, body, token, "PUT");
  const get = (path: string, token = manager.token) => t.app.request(path, { headers: bearer(token) });
  const del = (key: string, token = manager.token, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/variables/${key}`, { method: "DELETE", headers: bearer(token) });
  const stored = async () =>
    t.database.db
      .select({ key: studyVariables.key, type: studyVariables.type, value: studyVariables.value })
      .from(studyVariables)
      .where(eq(studyVariables.studyKey, "flu-watch"))
      .orderBy(studyVariables.key);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch", rules });
    await setupStudy(t, { key: "diet-study" });
    manager = await researcher(t, "flu-watch", "manage-study-variables");
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it("defines kitStock (201), sets it (200), and the rules read and update the value as the engine expects", async () => {
    const defined = await put("kitStock", { type: "int", value: 250 });
    expect(defined.status).toBe(201);
    expect((await defined.json()).variable).toEqual({
      key: "kitStock",
      type: "int",
      value: 250,
      valueUpdatedAt: expect.any(String),
    });
    const set = await put("kitStock", { value: 2 });
    expect(set.status).toBe(200);
    expect((await set.json()).variable).toMatchObject({ type: "int", value: 2 });

    const user = await participantUser(t);
    const enter = await postJson(
      t,
      "/v1/study-service/events/flu-watch/enter",
      { profileID: user.profiles[0]!.id },
      user.token,
    );
    expect(enter.status).toBe(200);
    expect((await enter.json()).warnings).toEqual([]);
    expect((await (await get(`${base}/kitStock`)).json()).variable).toMatchObject({ type: "int", value: 1 });

    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.target, "kitStock"));
    expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
      [manager.subject, "variable.define", { type: "int", value: 250 }],
      [manager.subject, "variable.set", { type: "int", value: 2, previous: { type: "int", value: 250 } }],
    ]);
  });

  it("stores each type as the rules read it: dates as Unix seconds, from seconds or ISO 8601", async () => {
    const cases: [string, unknown, unknown, unknown][] = [
      ["kitSupplier", "string", "Labor Nord", "Labor Nord"],
      ["returnRate", "float", 0.85, 0.85],
      ["recruiting", "boolean", true, true],
      ["campaignStart", "date", "2026-11-01", 1_793_491_200],
      ["campaignEnd", "date", "2027-03-31T18:00:00+02:00", 1_806_508_800],
      ["lastShipment", "date", 1_790_000_000, 1_790_000_000],
    ];
    for (const [key, type, value, expected] of cases) {
      const res = await put(key, { type, value });
      expect(res.status, key).toBe(201);
      expect((await res.json()).variable.value, key).toBe(expected);
    }
    const list = await get(base);
    expect(list.status).toBe(200);
    const { variables } = (await list.json()) as { variables: { key: string; type: string }[] };
    expect(variables.map((v) => `${v.key}:${v.type}`)).toEqual([
      "campaignEnd:date",
      "campaignStart:date",
      "kitStock:int",
      "kitSupplier:string",
      "lastShipment:date",
      "recruiting:boolean",
      "returnRate:float",
    ]);
  });

  it("changes a type only with a value of the new type", async () => {
    const missingValue = await put("returnRate", { type: "int" });
    expect(missingValue.status).toBe(400);
    expect((await missingValue.json()).error).toMatch(/body\.value: value must be a string, number or boolean/);
    const wrongValue = await put("returnRate", { type: "int", value: 0.85 });
    expect(wrongValue.status).toBe(400);
    const changed = await put("returnRate", { type: "int", value: 85 });
    expect(changed.status).toBe(200);
    expect((await changed.json()).variable).toMatchObject({ type: "int", value: 85 });
    const [entry] = await t.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.target, "returnRate"))
      .orderBy(auditLog.id)
      .offset(1);
    expect(entry?.details).toEqual({ type: "int", value: 85, previous: { type: "float", value: 0.85 } });
  });

  it("400 naming the field for values that do not fit the type or a new variable without a type", async () => {
    const before = await stored();
    const cases: [string, unknown, RegExp][] = [
      ["kitStock", { value: 2.5 }, /^value: an int variable takes a whole number/],
      ["kitStock", { value: "12" }, /^value: an int variable takes a whole number/],
      ["kitStock", { value: 2 ** 53 }, /^value: an int variable takes a whole number/],
      ["recruiting", { value: "yes" }, /^value: a boolean variable takes true or false/],
      ["kitSupplier", { value: 7 }, /^value: a string variable takes a string/],
      ["kitSupplier", { value: "x".repeat(10_001) }, /^value: a string variable takes a string of at most 10000/],
      ["campaignStart", { value: "next monday" }, /^value: a date variable takes Unix seconds/],
      ["campaignStart", { value: "2026-11-01T09:00:00" }, /^value: a date variable takes Unix seconds/],
      ["campaignStart", { value: 1.5 }, /^value: a date variable takes Unix seconds/],
      ["newOne", { value: 1 }, /^type: study variable "newOne" does not exist yet; give its type to define it/],
      ["newOne", { type: "decimal", value: 1 }, /^body\.type: /],
      ["newOne", { type: "int", value: null }, /^body\.value: /],
      ["newOne", { type: "int", value: 1, note: "x" }, /^body: Unrecognized key: "note"/],
      ["bad key", { type: "int", value: 1 }, /^param\.key: key must not contain spaces/],
    ];
    for (const [key, body, message] of cases) {
      const res = await put(encodeURIComponent(key), body);
      expect(res.status, `${key} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    expect(await stored()).toEqual(before);
  });

  it("reads one variable, deletes it (204, audited), and answers 404 for an unknown one", async () => {
    expect((await (await get(`${base}/recruiting`)).json()).variable).toMatchObject({ type: "boolean", value: true });
    expect((await del("recruiting")).status).toBe(204);
    const gone = await get(`${base}/recruiting`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: 'study variable "recruiting" not found in study "flu-watch"' });
    expect((await del("recruiting")).status).toBe(404);
    const [entry] = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "variable.delete"));
    expect(entry).toMatchObject({
      actor: manager.subject,
      target: "recruiting",
      details: { type: "boolean", value: true },
    });
  });

  it("401 without a token, 403 without manage-study-variables or with it for another study, 404 unknown study", async () => {
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["list", (token, studyKey) => get(`/v1/studies/${studyKey}/variables`, token)],
      ["get", (token, studyKey) => get(`/v1/studies/${studyKey}/variables/kitStock`, token)],
      ["put", (token, studyKey) => put("kitStock", { value: 999 }, token, studyKey)],
      ["delete", (token, studyKey) => del("kitStock", token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "manage-code-lists");
    const otherStudy = await researcher(t, "diet-study", "manage-study-variables");
    for (const [name, request] of routes) {
      expect((await request("", "flu-watch")).status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect(await forbidden.json()).toEqual({
        error: 'missing permission "manage-study-variables" for study "flu-watch"',
      });
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    expect((await stored()).find((v) => v.key === "kitStock")).toEqual({ key: "kitStock", type: "int", value: 1 });
  });
});
