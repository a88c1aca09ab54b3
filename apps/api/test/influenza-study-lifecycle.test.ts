import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, reports, studyCodeLists, surveyResponses } from "@studyflow/db";
import { toEngineState } from "@studyflow/domain/participants";
import { loadCurrentRules } from "@studyflow/domain/rules";
import { grantPermission } from "@studyflow/domain/study-setup";
import {
  applyRules,
  createDeterministicEnv,
  validateRules,
  type Expression,
  type ParticipantState,
} from "@studyflow/engine";
import {
  bearer,
  managementToken,
  participantIdOf,
  participantUser,
  postJson,
  readParticipant,
  researcher,
  setupStudy,
} from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * A study shaped as case-editor-tools generates them (Influenzanet style), driven through the HTTP
 * API: ENTER assigns the intake, draws a group and a kit code and registers the participant with an
 * external service; the intake's and the weekly survey's SUBMIT handlers read optional questions by
 * value; a TIMER rule removes expired surveys. The external service is a real HTTP server on
 * 127.0.0.1, configured through an external-services file as the server is.
 */

const RULES_FILE = new URL("./fixtures/influenza-study.rules.json", import.meta.url);
const STUDY = "influenza";
const DAY = 24 * 60 * 60;
const ENTER_AT = Date.UTC(2026, 0, 12, 8, 0, 0);
const INTAKE_AT = ENTER_AT + 2 * 3600_000;
const WEEKLY_1_AT = ENTER_AT + 7 * DAY * 1000;
const WEEKLY_2_AT = ENTER_AT + 14 * DAY * 1000;
const s = (ms: number) => Math.floor(ms / 1000);

const API_KEY = "registry-api-key-1";
const INSTANCE_ID = "flu-test-instance";

/** The paths of the rules' look-ups of optional questions (see the rules file). */
const AGE_PATH = "rules[1].data[1].exp.data[4].exp.data[1].exp";
const SMOKER_PATH = "rules[1].data[1].exp.data[5].exp.data[1].exp";
const TEMPERATURE_PATH = "rules[1].data[2].exp.data[2].exp.data[1].exp";
const REGISTRY_PATH = "rules[0].data[4].exp";

interface ServiceCall {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: {
    participantState: ParticipantState;
    eventType: string;
    studyKey: string;
    eventKey: string;
    payload: unknown;
    surveyResponses: unknown;
    apiKey?: string;
    instanceID?: string;
  };
}

/**
 * The `registry` service. Under /registry it registers the participant: it answers with the state
 * it was sent plus the flag `registered=yes` (pState replaces the whole state) and a report. Under
 * /outage it answers 503, or, for the study `flu-timeout`, never.
 */
function startRegistry() {
  const calls: ServiceCall[] = [];
  let registrations = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ServiceCall["body"];
      calls.push({ url: request.url ?? "", headers: request.headers, body });
      if (request.method === "POST" && request.url === "/registry/enter") {
        registrations += 1;
        const state = body.participantState;
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(
          JSON.stringify({
            pState: { ...state, flags: { ...state.flags, registered: "yes" } },
            reportsToCreate: [
              {
                key: "registration",
                data: [
                  { key: "registryId", value: `REG-${registrations}` },
                  { key: "kitCode", value: state.linkingCodes["kitCode"] ?? "" },
                ],
              },
            ],
          }),
        );
      } else if (request.url === "/outage/enter") {
        if (body.studyKey === "flu-timeout") return; // no answer: the caller's timeout ends the call
        response.writeHead(503, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ error: "down for maintenance" }));
      } else {
        response.writeHead(404).end();
      }
    });
  });
  return {
    calls,
    server,
    listen: () =>
      new Promise<number>((resolve) => {
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function loadRules(): Promise<Expression[]> {
  return JSON.parse(await readFile(RULES_FILE, "utf8")) as Expression[];
}

async function addCodes(t: TestApp, studyKey: string, codes: string[]) {
  // one at a time, so the ids (the drawing order) follow the list
  for (const code of codes) await t.database.db.insert(studyCodeLists).values({ studyKey, listKey: "kit-codes", code });
}

async function codesLeft(t: TestApp, studyKey: string) {
  const rows = await t.database.db
    .select({ code: studyCodeLists.code })
    .from(studyCodeLists)
    .where(and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, "kit-codes")))
    .orderBy(asc(studyCodeLists.id));
  return rows.map((r) => r.code);
}

/** A case-editor-tools style response item: `{key: "weekly.Q1", response: {key: "rg", items: [...]}}`. */
const numeric = (itemKey: string, value: string) => ({
  key: itemKey,
  response: { key: "rg", items: [{ key: "num", value, dtype: "number" }] },
});
const singleChoice = (itemKey: string, option: string) => ({
  key: itemKey,
  response: { key: "rg", items: [{ key: "scg", items: [{ key: option }] }] },
});
const multipleChoice = (itemKey: string, options: string[]) => ({
  key: itemKey,
  response: { key: "rg", items: [{ key: "mcg", items: options.map((key) => ({ key })) }] },
});
/** An item the participant saw and skipped: the app sends it without a response. */
const unanswered = (itemKey: string) => ({ key: itemKey });

describe("the influenza study's rules file", () => {
  it("passes the engine's validator", async () => {
    const validation = validateRules(await loadRules());
    expect(validation.ok ? [] : validation.errors).toEqual([]);
  });
});

describe("influenza study lifecycle through the HTTP API", () => {
  const registry = startRegistry();
  let dir: string;
  let t: TestApp;
  let study: Awaited<ReturnType<typeof setupStudy>>;
  let staff: string;
  let participantId: string;
  let group: string;

  const responsesPath = () => `/v1/studies/${STUDY}/participants/${participantId}/responses`;
  const ruleFailuresOf = async (app: TestApp, studyKey: string, token: string, query = "") => {
    const res = await app.app.request(`/v1/studies/${studyKey}/rule-failures${query}`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    return (await res.json()).ruleFailures as Record<string, unknown>[];
  };
  const reportsOf = (app: TestApp, studyKey: string, key: string) =>
    app.database.db
      .select()
      .from(reports)
      .where(and(eq(reports.studyKey, studyKey), eq(reports.key, key)))
      .orderBy(asc(reports.timestamp));

  beforeAll(async () => {
    const port = await registry.listen();
    dir = await mkdtemp(path.join(tmpdir(), "flu-services-"));
    const servicesFile = path.join(dir, "external-services.yaml");
    await writeFile(
      servicesFile,
      [
        "externalServices:",
        "  - name: registry",
        `    url: http://127.0.0.1:${port}/registry`,
        `    apiKey: ${API_KEY}`,
        "    timeout: 5",
        "",
      ].join("\n"),
    );
    t = await createTestApp({ env: { EXTERNAL_SERVICES_FILE: servicesFile, INSTANCE_ID } });
    t.setNow(ENTER_AT);
    study = await setupStudy(t, { key: STUDY, rules: await loadRules() });
    await addCodes(t, STUDY, ["KIT-0001", "KIT-0002", "KIT-0003"]);
    const subject = "flu-study-manager";
    await grantPermission(t.database.db, subject, STUDY, "edit-participant-data");
    await grantPermission(t.database.db, subject, STUDY, "read-rule-failures");
    staff = await managementToken(t, subject);
  });
  afterAll(async () => {
    await t?.close();
    await registry.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("ENTER: assigns the intake, a group and a kit code, and registers the participant with the external service", async () => {
    const user = await participantUser(t);
    const profileID = user.profiles[0]!.id;
    const res = await postJson(t, `/v1/study-service/events/${STUDY}/enter`, { profileID }, user.token);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({
      created: true,
      warnings: [],
      assignedSurveys: [
        {
          surveyKey: "intake",
          validFrom: s(ENTER_AT),
          validUntil: s(ENTER_AT) + 30 * DAY,
          category: "prio",
          studyKey: STUDY,
          profileID: "",
        },
      ],
    });

    participantId = participantIdOf(study, profileID);
    const row = await readParticipant(t.database.db, STUDY, participantId);
    expect(row).toBeDefined();
    group = row!.flags["group"]!;
    expect(["A", "B"]).toContain(group);
    // registered=yes came from the service's pState, which replaced the state the rules had built
    expect(row!.flags).toEqual({ group, registered: "yes" });
    expect(row!.linkingCodes).toEqual({ kitCode: "KIT-0001" });
    expect(await codesLeft(t, STUDY)).toEqual(["KIT-0002", "KIT-0003"]);

    // the service got the documented body: the state as the earlier actions left it, the event, apiKey, instanceID
    expect(registry.calls).toHaveLength(1);
    const call = registry.calls[0]!;
    expect(call.url).toBe("/registry/enter");
    expect(call.headers["api-key"]).toBe(API_KEY);
    expect(call.headers["content-type"]).toBe("application/json");
    expect(call.body).toMatchObject({
      eventType: "ENTER",
      studyKey: STUDY,
      eventKey: "",
      payload: null,
      surveyResponses: null,
      apiKey: API_KEY,
      instanceID: INSTANCE_ID,
      participantState: {
        participantId,
        studyStatus: "active",
        enteredAt: s(ENTER_AT),
        flags: { group },
        linkingCodes: { kitCode: "KIT-0001" },
        assignedSurveys: [
          { surveyKey: "intake", validFrom: s(ENTER_AT), validUntil: s(ENTER_AT) + 30 * DAY, category: "prio" },
        ],
      },
    });
    expect(call.body.participantState.flags).not.toHaveProperty("registered");

    // the service's reportsToCreate entry is stored with the ENTER event
    expect(await reportsOf(t, STUDY, "registration")).toMatchObject([
      {
        participantId,
        eventType: "ENTER",
        responseId: null,
        timestamp: s(ENTER_AT),
        data: [
          { key: "registryId", value: "REG-1" },
          { key: "kitCode", value: "KIT-0001" },
        ],
      },
    ]);
  });

  it("SUBMIT intake with the optional questions unanswered: stored, weekly assigned, the look-ups skipped with warnings", async () => {
    t.setNow(INTAKE_AT);
    const intake = {
      key: "intake",
      versionId: "intake-v3",
      submittedAt: s(INTAKE_AT) - 30,
      responses: [singleChoice("intake.Q1", "female"), unanswered("intake.Q2"), unanswered("intake.Q3")],
    };
    const res = await postJson(t, responsesPath(), intake, staff);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.result).toEqual([
      {
        surveyKey: "weekly",
        validFrom: s(INTAKE_AT),
        validUntil: s(INTAKE_AT) + 7 * DAY,
        category: "prio",
        studyKey: STUDY,
        profileID: "",
      },
    ]);
    expect(body.participant).toMatchObject({
      participantId,
      flags: { group, registered: "yes", intakeDone: "yes" },
      linkingCodes: { kitCode: "KIT-0001" },
      lastSubmissions: { intake: s(INTAKE_AT) },
    });
    expect(body.participant.flags).not.toHaveProperty("age");
    expect(body.participant.flags).not.toHaveProperty("smoker");
    expect(body.warnings).toEqual([
      {
        eventType: "SUBMIT",
        ruleIndex: 1,
        path: AGE_PATH,
        message: expect.stringMatching(/UPDATE_FLAG: item not found/),
        outcome: "action-skipped",
      },
      {
        eventType: "SUBMIT",
        ruleIndex: 1,
        path: SMOKER_PATH,
        message: expect.stringMatching(/UPDATE_FLAG: item not found/),
        outcome: "action-skipped",
      },
    ]);

    const stored = await t.database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.key, "intake")));
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      participantId,
      versionId: "intake-v3",
      submittedAt: s(INTAKE_AT) - 30,
      arrivedAt: s(INTAKE_AT),
      responses: intake.responses,
    });
    const row = await readParticipant(t.database.db, STUDY, participantId);
    expect(row!.flags).toEqual({ group, registered: "yes", intakeDone: "yes" });
    expect(row!.assignedSurveys.map((a) => a.surveyKey)).toEqual(["weekly"]);
    expect(await reportsOf(t, STUDY, "intake")).toMatchObject([
      { participantId, eventType: "SUBMIT", responseId: stored[0]!.id, data: [{ key: "group", value: group }] },
    ]);

    const failures = await ruleFailuresOf(t, STUDY, staff, "?eventType=SUBMIT");
    expect(failures).toHaveLength(2);
    // both were recorded in the same instant: compare them in path order
    const byPath = [...failures].sort((a, b) => String(a["path"]).localeCompare(String(b["path"])));
    const expected = {
      participantId,
      eventType: "SUBMIT",
      eventKey: "intake",
      rulesVersion: 1,
      taskId: null,
      ruleIndex: 1,
      message: expect.stringMatching(/UPDATE_FLAG: item not found/),
      outcome: "action-skipped",
    };
    expect(byPath).toMatchObject([
      { ...expected, path: AGE_PATH },
      { ...expected, path: SMOKER_PATH },
    ]);
  });

  it("SUBMIT weekly with symptoms and a temperature: flags, report data, the next weekly assigned", async () => {
    t.setNow(WEEKLY_1_AT);
    const res = await postJson(
      t,
      responsesPath(),
      {
        key: "weekly",
        responses: [multipleChoice("weekly.Q1", ["fever", "cough"]), numeric("weekly.Q2", "38.5")],
      },
      staff,
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.warnings).toEqual([]);
    expect(body.participant.flags).toEqual({
      group,
      registered: "yes",
      intakeDone: "yes",
      symptoms: "yes",
      temperature: "38.500000",
    });
    expect(body.result).toEqual([
      {
        surveyKey: "weekly",
        validFrom: s(WEEKLY_1_AT),
        validUntil: s(WEEKLY_1_AT) + 7 * DAY,
        category: "prio",
        studyKey: STUDY,
        profileID: "",
      },
    ]);
    expect(body.participant.lastSubmissions).toEqual({ intake: s(INTAKE_AT), weekly: s(WEEKLY_1_AT) });
    expect(await reportsOf(t, STUDY, "weekly")).toMatchObject([
      {
        eventType: "SUBMIT",
        timestamp: s(WEEKLY_1_AT),
        data: [
          { key: "symptoms", value: "fever;cough" },
          { key: "hasSymptoms", value: "yes" },
        ],
      },
    ]);
  });

  it("SUBMIT weekly without the optional temperature: stored, the temperature look-up skipped, the other flags set", async () => {
    t.setNow(WEEKLY_2_AT);
    const res = await postJson(
      t,
      responsesPath(),
      { key: "weekly", responses: [multipleChoice("weekly.Q1", ["none"]), unanswered("weekly.Q2")] },
      staff,
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.warnings).toEqual([
      {
        eventType: "SUBMIT",
        ruleIndex: 1,
        path: TEMPERATURE_PATH,
        message: expect.stringMatching(/UPDATE_FLAG: item not found/),
        outcome: "action-skipped",
      },
    ]);
    // symptoms switched to "no"; the temperature flag keeps last week's value
    expect(body.participant.flags).toEqual({
      group,
      registered: "yes",
      intakeDone: "yes",
      symptoms: "no",
      temperature: "38.500000",
    });
    expect(body.result).toMatchObject([
      { surveyKey: "weekly", validFrom: s(WEEKLY_2_AT), validUntil: s(WEEKLY_2_AT) + 7 * DAY },
    ]);
    const weeklies = await t.database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.key, "weekly")))
      .orderBy(asc(surveyResponses.arrivedAt));
    expect(weeklies.map((r) => r.arrivedAt)).toEqual([s(WEEKLY_1_AT), s(WEEKLY_2_AT)]);
    expect((await reportsOf(t, STUDY, "weekly")).map((r) => r.data)).toEqual([
      [
        { key: "symptoms", value: "fever;cough" },
        { key: "hasSymptoms", value: "yes" },
      ],
      [
        { key: "symptoms", value: "none" },
        { key: "hasSymptoms", value: "no" },
      ],
    ]);
    const failures = await ruleFailuresOf(t, STUDY, staff, `?participantId=${participantId}`);
    expect(failures[0]).toMatchObject({ eventKey: "weekly", path: TEMPERATURE_PATH, rulesVersion: 1 });
    expect(failures).toHaveLength(3);
  });

  it("TIMER (run with the engine on the stored state): removes the weekly once its validUntil has passed", async () => {
    const current = await loadCurrentRules(t.database.db, STUDY);
    expect(current?.version).toBe(1);
    const row = await readParticipant(t.database.db, STUDY, participantId);
    const state = toEngineState(row!);
    const validUntil = s(WEEKLY_2_AT) + 7 * DAY;
    expect(state.assignedSurveys).toMatchObject([{ surveyKey: "weekly", validUntil }]);
    const timer = { type: "TIMER" as const, studyKey: STUDY };

    const before = await applyRules(
      current!.compiled,
      state,
      timer,
      createDeterministicEnv({ now: (validUntil - 60) * 1000 }),
      { onRuleError: "continue" },
    );
    expect(before.errors).toBeUndefined();
    expect(before.skippedActions).toBeUndefined();
    expect(before.state.assignedSurveys).toEqual(state.assignedSurveys);
    expect(before.changedPerRule).toEqual([false, false, false]);

    const after = await applyRules(
      current!.compiled,
      state,
      timer,
      createDeterministicEnv({ now: (validUntil + 60) * 1000 }),
      { onRuleError: "continue" },
    );
    expect(after.errors).toBeUndefined();
    expect(after.skippedActions).toBeUndefined();
    expect(after.state.assignedSurveys).toEqual([]);
    expect(after.state.flags).toEqual(state.flags);
    expect(after.changedPerRule).toEqual([false, false, true]);
    expect(after.reports).toEqual([]);
  });

  describe("when the external service fails", () => {
    let down: TestApp;
    let reader: string;

    beforeAll(async () => {
      const port = (registry.server.address() as AddressInfo).port;
      const servicesFile = path.join(dir, "external-services-outage.json");
      await writeFile(
        servicesFile,
        JSON.stringify({
          externalServices: [
            { name: "registry", url: `http://127.0.0.1:${port}/outage`, apiKey: API_KEY, timeout: 0.5 },
          ],
        }),
      );
      down = await createTestApp({ env: { EXTERNAL_SERVICES_FILE: servicesFile } });
      down.setNow(ENTER_AT);
      for (const key of ["flu-503", "flu-timeout"]) {
        await setupStudy(down, { key, rules: await loadRules() });
        await addCodes(down, key, ["KIT-9001", "KIT-9002"]);
      }
      ({ token: reader } = await researcher(down, "*", "read-rule-failures"));
    });
    afterAll(async () => {
      await down?.close();
    });

    it.each([
      ["answers 503", "flu-503", /external service "registry" answered HTTP 503/],
      ["does not answer in time", "flu-timeout", /external service "registry" did not answer within 0\.5 s/],
    ])(
      "the participant still enters when it %s: the ENTER IFTHEN's other actions stand, with a warning and a failure record",
      async (_, studyKey, message) => {
        const callsBefore = registry.calls.length;
        const user = await participantUser(down);
        const profileID = user.profiles[0]!.id;
        const res = await postJson(down, `/v1/study-service/events/${studyKey}/enter`, { profileID }, user.token);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body.created).toBe(true);
        expect(body.assignedSurveys).toMatchObject([{ surveyKey: "intake", validUntil: s(ENTER_AT) + 30 * DAY }]);
        expect(body.warnings).toEqual([
          {
            eventType: "ENTER",
            ruleIndex: 0,
            path: REGISTRY_PATH,
            message: expect.stringMatching(message),
            outcome: "action-skipped",
          },
        ]);
        expect(registry.calls.slice(callsBefore).map((c) => [c.url, c.body.studyKey])).toEqual([
          ["/outage/enter", studyKey],
        ]);

        const [row] = await down.database.db.select().from(participants).where(eq(participants.studyKey, studyKey));
        expect(row).toBeDefined();
        expect(["A", "B"]).toContain(row!.flags["group"]);
        expect(row!.flags).not.toHaveProperty("registered");
        expect(row!.linkingCodes).toEqual({ kitCode: "KIT-9001" });
        expect(row!.assignedSurveys.map((a) => a.surveyKey)).toEqual(["intake"]);
        expect(await codesLeft(down, studyKey)).toEqual(["KIT-9002"]);
        expect(await reportsOf(down, studyKey, "registration")).toEqual([]);

        const failures = await ruleFailuresOf(down, studyKey, reader);
        expect(failures).toEqual([
          expect.objectContaining({
            participantId: row!.participantId,
            eventType: "ENTER",
            eventKey: "",
            rulesVersion: 1,
            ruleIndex: 0,
            path: REGISTRY_PATH,
            message: expect.stringMatching(message),
            outcome: "action-skipped",
          }),
        ]);
      },
    );
  });
});
