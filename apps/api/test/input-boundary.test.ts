import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, studies, surveyResponses, tasks } from "@studyflow/db";
import { MAX_JSON_DEPTH } from "../src/middleware/input-boundary";
import {
  bearer,
  call,
  insertParticipant,
  managementToken,
  onEvent,
  participantUser,
  postJson,
  setupStudy,
  str,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

describe("the input boundary: NUL, lone surrogates, nesting; complete surveys; the run-actions path", () => {
  let t: TestApp;
  let admin: string;
  const rows = async () => ({
    studies: (await t.database.db.select().from(studies)).length,
    participants: (await t.database.db.select().from(participants)).length,
    responses: (await t.database.db.select().from(surveyResponses)).length,
    tasks: (await t.database.db.select().from(tasks)).length,
  });

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, {
      key: "study-a",
      rules: [onEvent("SUBMIT", call("ADD_NEW_SURVEY", str("weekly"), str("0"), str("0"), str("normal")))],
    });
    await insertParticipant(t.database.db, { studyKey: "study-a", participantId: "p1" });
    admin = await managementToken(t, "root", true);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["a NUL in a path parameter", "/v1/studies/%00/track-account", /path segment must not contain a NUL/],
    ["a NUL in a participant id", "/v1/studies/study-a/participants/%00/responses", /NUL/],
    ["an invalid UTF-8 escape", "/v1/studies/%ED%A0%80/track-account", /not valid percent-encoded UTF-8/],
    [
      "a NUL in a query value",
      "/v1/studies/study-a/rule-failures?participantId=%00",
      /query\.participantId must not contain a NUL/,
    ],
  ])("%s: 400 naming it", async (_title, path, message) => {
    const before = await rows();
    const res = await t.app.request(path, {
      method: path.includes("track-account") ? "PUT" : path.includes("responses") ? "POST" : "GET",
      headers: { ...bearer(admin), "Content-Type": "application/json" },
      body: path.includes("rule-failures") ? undefined : JSON.stringify({ key: "intake", trackAccount: true }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(message);
    expect(await rows()).toEqual(before);
  });

  it.each([
    [
      "a NUL in a body value",
      { key: "intake", context: { note: "a\u0000b" } },
      /body\.context\.note must not contain a NUL/,
    ],
    [
      "a NUL in a body key",
      { key: "intake", context: { "n\u0000": "x" } },
      /a key of body\.context must not contain a NUL/,
    ],
    ["a lone surrogate", { key: "\ud800" }, /body\.key must not contain a lone UTF-16 surrogate/],
    [
      "a lone low surrogate deep inside",
      { key: "k", responses: [{ key: "q", response: { key: "r", value: "x\udfff" } }] },
      /body\.responses\[0\]\.response\.value must not contain a lone/,
    ],
  ])("%s: 400 naming the field, nothing stored", async (_title, body, message) => {
    const before = await rows();
    const res = await postJson(t, "/v1/studies/study-a/participants/p1/responses", body, admin);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(message);
    expect(await rows()).toEqual(before);
  });

  it("the public temporary-participant route refuses a NUL study key with 400, no token needed", async () => {
    const res = await postJson(t, "/v1/study-service/temp-participant/register", { studyKey: "\u0000" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/body\.studyKey must not contain a NUL/);
  });

  it(`a body nested deeper than ${MAX_JSON_DEPTH} levels is a 400 naming the limit, even 3,000 deep`, async () => {
    // written as text: JSON.stringify itself would run out of stack on such a value
    const depth = 3_000;
    const item = `${'{"key":"k","items":['.repeat(depth)}{"key":"leaf"}${"]}".repeat(depth)}`;
    const res = await postJson(
      t,
      "/v1/studies/study-a/participants/p1/responses",
      `{"key":"intake","responses":[{"key":"q","response":${item}}]}`,
      admin,
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: `body is nested deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it("a well-formed body with emoji and accents passes, and surveys come back complete everywhere", async () => {
    const res = await postJson(
      t,
      "/v1/studies/study-a/participants/p1/responses",
      { key: "intake", context: { note: "naïve 😀" } },
      admin,
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    const complete = {
      surveyKey: "weekly",
      validFrom: 0,
      validUntil: 0,
      category: "normal",
      studyKey: "study-a",
      profileID: "",
    };
    expect(body.result).toEqual([complete]);
    expect(body.participant.assignedSurveys).toEqual([complete]);
  });

  it("run-actions answers with and without the trailing slash; OpenAPI shows the spec's form only", async () => {
    for (const path of [
      "/v1/studies/study-a/run-actions/participants/",
      "/v1/studies/study-a/run-actions/participants",
    ]) {
      const res = await postJson(t, path, { rules: [call("UPDATE_FLAG", str("a"), str("b"))], dryRun: true }, admin);
      expect(res.status, path).toBe(200);
    }
    const doc = await (await t.app.request("/openapi.json")).json();
    const paths = Object.keys(doc.paths as object).filter(
      (p) => p.includes("run-actions/participants") && !p.includes("task") && !p.includes("{participantID}"),
    );
    expect(paths).toEqual(["/v1/studies/{studyKey}/run-actions/participants/"]);
  });

  it("a participant event answers with complete surveys too", async () => {
    const user = await participantUser(t);
    const res = await postJson(t, "/v1/study-service/temp-participant/register", { studyKey: "study-a" });
    expect(res.status).toBe(200);
    const enter = await postJson(
      t,
      "/v1/study-service/events/study-a/enter",
      { profileID: user.profiles[0]!.id },
      user.token,
    );
    expect(enter.status).toBe(200);
    for (const survey of (await enter.json()).assignedSurveys as object[]) {
      expect(Object.keys(survey).sort()).toEqual([
        "category",
        "profileID",
        "studyKey",
        "surveyKey",
        "validFrom",
        "validUntil",
      ]);
    }
  });
});
