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
  caseRequest,
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

describe("study variables: /v1/studies/{studyKey}/variables (CASE)", () => {
  let t: TestApp;
  let manager: { subject: string; token: string };
  let admin: string;
  const base = "/v1/studies/flu-watch/variables";
  const define = (variableDef: Record<string, unknown>, token = manager.token, studyKey = "flu-watch") =>
    caseRequest(t, "POST", `/v1/studies/${studyKey}/variables`, { variableDef }, token);
  const setValue = (key: string, variable: unknown, token = manager.token, studyKey = "flu-watch") =>
    caseRequest(t, "PUT", `/v1/studies/${studyKey}/variables/${key}/value`, { variable }, token);
  const describeVariable = (key: string, variableDef: unknown, token = manager.token, studyKey = "flu-watch") =>
    caseRequest(t, "PUT", `/v1/studies/${studyKey}/variables/${key}`, { variableDef }, token);
  const get = (path: string, token = manager.token) => t.app.request(path, { headers: bearer(token) });
  const del = (key: string, token = manager.token, studyKey = "flu-watch") =>
    t.app.request(`/v1/studies/${studyKey}/variables/${key}`, { method: "DELETE", headers: bearer(token) });
  const stored = async () =>
    t.database.db
      .select({
        key: studyVariables.key,
        type: studyVariables.type,
        value: studyVariables.value,
        label: studyVariables.label,
        uiPriority: studyVariables.uiPriority,
      })
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

  it("defines kitStock (200 {id}), sets its value (200 {message}), and the rules read and update it", async () => {
    const defined = await define({ key: "kitStock", type: "int", value: 250, label: "Kits in stock", uiPriority: 2 });
    expect(defined.status).toBe(200);
    expect(await defined.json()).toEqual({ id: "kitStock" });
    const set = await setValue("kitStock", { value: "2", type: "int" });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ message: "study variable value updated" });

    const user = await participantUser(t);
    const enter = await postJson(
      t,
      "/v1/study-service/events/flu-watch/enter",
      { profileID: user.profiles[0]!.id },
      user.token,
    );
    expect(enter.status).toBe(200);
    expect((await enter.json()).warnings).toEqual([]);
    const read = await get(`${base}/kitStock`);
    expect(read.status).toBe(200);
    expect((await read.json()).variable).toEqual({
      id: "kitStock",
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      configUpdatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      valueUpdatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      studyKey: "flu-watch",
      key: "kitStock",
      type: "int",
      value: 1,
      label: "Kits in stock",
      description: "",
      uiType: "",
      uiPriority: 2,
    });

    const audit = await t.database.db.select().from(auditLog).where(eq(auditLog.target, "kitStock"));
    expect(audit.map((e) => [e.actor, e.action, e.details])).toEqual([
      [manager.subject, "variable.define", { type: "int", value: 250 }],
      [manager.subject, "variable.set", { type: "int", value: 2, previous: { type: "int", value: 250 } }],
    ]);
  });

  it("reads values as case-backend does and stores them as the rules read them: dates as Unix seconds", async () => {
    const cases: [string, string, unknown, unknown, unknown][] = [
      ["kitSupplier", "string", "Labor Nord", "Labor Nord", "Labor Nord"],
      ["returnRate", "float", "0.85", 0.85, 0.85],
      ["recruiting", "boolean", "true", true, true],
      ["paused", "boolean", "0", false, false],
      ["campaignStart", "date", "2026-11-01T00:00:00Z", 1_793_491_200, "2026-11-01T00:00:00Z"],
      ["campaignEnd", "date", "2027-03-31T18:00:00+02:00", 1_806_508_800, "2027-03-31T16:00:00Z"],
      ["lastShipment", "date", 1_790_000_000_000, 1_790_000_000, "2026-09-21T14:13:20Z"],
      ["firstShipment", "date", "1780000000", 1_780_000_000, "2026-05-28T20:26:40Z"],
    ];
    for (const [key, type, value, rulesRead, shown] of cases) {
      const res = await define({ key, type, value });
      expect(res.status, key).toBe(200);
      const [row] = (await stored()).filter((v) => v.key === key);
      expect(row?.value, key).toBe(rulesRead);
      expect((await (await get(`${base}/${key}`)).json()).variable.value, key).toBe(shown);
    }
    // without a value: the type's zero, which the rules can read
    expect((await define({ key: "note", type: "string" })).status).toBe(200);
    expect((await define({ key: "kitsPerBox", type: "int", value: null })).status).toBe(200);
    expect((await stored()).filter((v) => ["note", "kitsPerBox"].includes(v.key))).toEqual([
      { key: "kitsPerBox", type: "int", value: 0, label: "", uiPriority: 0 },
      { key: "note", type: "string", value: "", label: "", uiPriority: 0 },
    ]);
    const list = await get(base);
    expect(list.status).toBe(200);
    const { variables } = (await list.json()) as { variables: { key: string; type: string; studyKey: string }[] };
    expect(variables.map((v) => `${v.key}:${v.type}`)).toEqual([
      "campaignEnd:date",
      "campaignStart:date",
      "firstShipment:date",
      "kitStock:int",
      "kitSupplier:string",
      "kitsPerBox:int",
      "lastShipment:date",
      "note:string",
      "paused:boolean",
      "recruiting:boolean",
      "returnRate:float",
    ]);
    expect(new Set(variables.map((v) => v.studyKey))).toEqual(new Set(["flu-watch"]));
  });

  it("describes a variable (label … configs replaced, value and type kept), audited", async () => {
    const res = await describeVariable("kitStock", {
      key: "ignored",
      type: "string",
      value: "ignored",
      label: "Kits left",
      description: "Test kits not yet sent",
      uiType: "number",
      uiPriority: 5,
      configs: { min: 0, max: 1000 },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "study variable definition updated" });
    const { variable } = (await (await get(`${base}/kitStock`)).json()) as { variable: Record<string, unknown> };
    expect(variable).toMatchObject({
      key: "kitStock",
      type: "int",
      value: 1,
      label: "Kits left",
      description: "Test kits not yet sent",
      uiType: "number",
      uiPriority: 5,
      configs: { min: 0, max: 1000 },
    });
    // absent fields become empty, as case-backend sets them
    expect((await describeVariable("kitStock", { label: "Kits" })).status).toBe(200);
    expect((await (await get(`${base}/kitStock`)).json()).variable).toMatchObject({
      label: "Kits",
      description: "",
      uiType: "",
      uiPriority: 0,
    });
    expect((await (await get(`${base}/kitStock`)).json()).variable.configs).toBeUndefined();
    const [entry] = await t.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.action, "variable.describe"))
      .orderBy(auditLog.id);
    expect(entry).toMatchObject({ actor: manager.subject, target: "kitStock" });
  });

  it("400 naming the field for values that do not fit the type, 409 for a key in use; nothing written", async () => {
    const before = await stored();
    const auditBefore = (await t.database.db.select().from(auditLog)).length;
    const values: [string, unknown, RegExp][] = [
      ["kitStock", { value: 2.5 }, /^variable\.value: an int variable takes a whole number/],
      ["kitStock", { value: "twelve" }, /^variable\.value: an int variable takes a whole number/],
      ["kitStock", { value: 2 ** 53 }, /^variable\.value: an int variable takes a whole number/],
      ["kitStock", { value: null }, /^variable\.value: required/],
      [
        "kitStock",
        { value: 3, type: "float" },
        /^variable\.type: study variable "kitStock" is an int variable, not float/,
      ],
      ["recruiting", { value: "yes" }, /^variable\.value: a boolean variable takes true or false/],
      ["kitSupplier", { value: 7 }, /^variable\.value: a string variable takes a string/],
      ["kitSupplier", { value: "x".repeat(10_001) }, /^variable\.value: a string variable takes a string of at most/],
      ["campaignStart", { value: "next monday" }, /^variable\.value: a date variable takes Unix seconds/],
      ["campaignStart", { value: "2026-11-01T09:00:00" }, /^variable\.value: a date variable takes Unix seconds/],
      ["kitStock", { value: [1] }, /^body\.variable\.value: value must be a string, number or boolean/],
    ];
    for (const [key, variable, message] of values) {
      const res = await setValue(key, variable);
      expect(res.status, `${key} ${JSON.stringify(variable).slice(0, 60)}`).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
    const definitions: [Record<string, unknown>, number, RegExp][] = [
      [{ type: "int" }, 400, /^body\.variableDef\.key: /],
      [{ key: "x" }, 400, /^body\.variableDef\.type: /],
      [{ key: "x", type: "decimal" }, 400, /^body\.variableDef\.type: /],
      [{ key: "bad key", type: "int" }, 400, /^body\.variableDef\.key: key must not contain spaces/],
      [{ key: "x", type: "int", value: 1.5 }, 400, /^variableDef\.value: an int variable takes a whole number/],
      [{ key: "x", type: "int", uiPriority: 1.5 }, 400, /^body\.variableDef\.uiPriority: /],
      [{ key: "x", type: "int", label: "l".repeat(501) }, 400, /^variableDef\.label: is longer than 500/],
      [{ key: "kitStock", type: "int", value: 5 }, 409, /^study variable "kitStock" already exists/],
    ];
    for (const [variableDef, status, message] of definitions) {
      const res = await define(variableDef);
      expect(res.status, JSON.stringify(variableDef).slice(0, 60)).toBe(status);
      expect((await res.json()).error).toMatch(message);
    }
    const empty = await t.app.request(base, { method: "POST", headers: bearer(manager.token), body: "" });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error).toMatch(/^body: required/);
    expect(await stored()).toEqual(before);
    expect((await t.database.db.select().from(auditLog)).length).toBe(auditBefore);
  });

  it("deletes a variable (200 {success:true}, audited), and answers 404 for an unknown one", async () => {
    const res = await del("recruiting");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true });
    const gone = await get(`${base}/recruiting`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: 'study variable "recruiting" not found in study "flu-watch"' });
    expect((await del("recruiting")).status).toBe(404);
    expect((await setValue("recruiting", { value: true })).status).toBe(404);
    expect((await describeVariable("recruiting", { label: "x" })).status).toBe(404);
    const [entry] = await t.database.db.select().from(auditLog).where(eq(auditLog.action, "variable.delete"));
    expect(entry).toMatchObject({
      actor: manager.subject,
      target: "recruiting",
      details: { type: "boolean", value: true },
    });
  });

  it("401 without a token, 403 without the permission or with it for another study, 404 unknown study", async () => {
    const routes: [string, (token: string, studyKey: string) => Response | Promise<Response>][] = [
      ["list", (token, studyKey) => get(`/v1/studies/${studyKey}/variables`, token)],
      ["get", (token, studyKey) => get(`/v1/studies/${studyKey}/variables/kitStock`, token)],
      ["create", (token, studyKey) => define({ key: "other", type: "int" }, token, studyKey)],
      ["describe", (token, studyKey) => describeVariable("kitStock", { label: "x" }, token, studyKey)],
      ["value", (token, studyKey) => setValue("kitStock", { value: 999 }, token, studyKey)],
      ["delete", (token, studyKey) => del("kitStock", token, studyKey)],
    ];
    const otherRight = await researcher(t, "flu-watch", "manage-code-lists");
    const otherStudy = await researcher(t, "diet-study", "manage-study-variables");
    for (const [name, request] of routes) {
      expect((await request("", "flu-watch")).status, name).toBe(401);
      const forbidden = await request(otherRight.token, "flu-watch");
      expect(forbidden.status, name).toBe(403);
      expect((await forbidden.json()).error, name).toMatch(/^missing permission/);
      expect((await request(otherStudy.token, "flu-watch")).status, name).toBe(403);
      const missing = await request(admin, "nope");
      expect(missing.status, name).toBe(404);
      expect(await missing.json()).toEqual({ error: 'study "nope" not found' });
    }
    // reading needs only read-study-config; writing needs manage-study-variables
    const reader = await researcher(t, "flu-watch", "read-study-config");
    expect((await get(base, reader.token)).status).toBe(200);
    expect((await get(`${base}/kitStock`, reader.token)).status).toBe(200);
    expect((await setValue("kitStock", { value: 7 }, reader.token)).status).toBe(403);
    expect((await stored()).find((v) => v.key === "kitStock")).toMatchObject({ type: "int", value: 1 });
    expect((await stored()).some((v) => v.key === "other")).toBe(false);
  });
});
