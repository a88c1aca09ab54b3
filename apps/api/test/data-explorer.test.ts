import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, reports, surveyResponses } from "@studyflow/db";
import { bearer, insertParticipant, managementToken, researcher, setupStudy } from "./fixtures";
import { caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const BASE = "/v1/studies/flu-watch/data-explorer";
const T0 = 1_780_000_000;

interface Page {
  pagination: { totalCount: number; currentPage: number; totalPages: number; pageSize: number };
  [key: string]: unknown;
}
type Json = Record<string, unknown>;

describe("data explorer: /v1/studies/{studyKey}/data-explorer", () => {
  let t: TestApp;
  let admin: string;
  let version: string;
  const participantIds = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
  const responseIds: string[] = [];
  let otherResponseId: string;
  let otherReportId: string;
  let reportIds: string[] = [];

  const get = async (path: string, token = admin) => {
    const response = await t.app.request(path, { headers: bearer(token) });
    return { status: response.status, body: (await response.json()) as Json & Page };
  };
  const del = async (path: string, token = admin) => {
    const response = await t.app.request(path, { method: "DELETE", headers: bearer(token) });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const q = (params: Record<string, unknown>) =>
    "?" +
    new URLSearchParams(
      Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    ).toString();
  const ids = (rows: unknown) => (rows as { participantId: string }[]).map((row) => row.participantId);

  beforeAll(async () => {
    t = await createTestApp();
    await setupStudy(t, { key: "flu-watch" });
    await setupStudy(t, { key: "diet-study" });
    admin = await managementToken(t, "root", true);
    version = await uploadSurvey(t, "flu-watch", admin, caseSurvey("weekly"));
    for (const [i, participantId] of participantIds.entries()) {
      await insertParticipant(t.database.db, {
        studyKey: "flu-watch",
        participantId,
        studyStatus: i % 2 === 0 ? "active" : "exited",
        enteredAt: T0 + (i % 5) * 100,
        flags: { group: i % 3 === 0 ? "a" : "b" },
      });
    }
    await insertParticipant(t.database.db, { studyKey: "diet-study", participantId: "q1" });

    const response = (participantId: string, key: string, submittedAt: number, studyKey = "flu-watch") => ({
      studyKey,
      participantId,
      key,
      versionId: version,
      openedAt: submittedAt - 60,
      submittedAt,
      arrivedAt: submittedAt + 1,
      responses: [
        {
          key: `${key}.Q1`,
          meta: { position: 0, localeCode: "en", rendered: [], displayed: [], responded: [] },
          response: { key: "rg", items: [{ key: "scg", items: [{ key: "2" }] }] },
        },
      ],
      context: { engineVersion: "1.2.0", language: "en" },
    });
    for (let i = 0; i < 12; i++) {
      const [row] = await t.database.db
        .insert(surveyResponses)
        .values(response(participantIds[i]!, "weekly", T0 + 1000 - i * 10))
        .returning({ id: surveyResponses.id });
      responseIds.push(row!.id);
    }
    for (let i = 0; i < 3; i++)
      await t.database.db.insert(surveyResponses).values(response(participantIds[i]!, "intake", T0));
    const [other] = await t.database.db
      .insert(surveyResponses)
      .values(response("q1", "weekly", T0, "diet-study"))
      .returning({ id: surveyResponses.id });
    otherResponseId = other!.id;

    const reportRows = Array.from({ length: 15 }, (_, i) => ({
      studyKey: "flu-watch",
      participantId: participantIds[i % 4]!,
      key: i % 3 === 0 ? "vaccination" : "symptoms",
      responseId: i === 0 ? responseIds[0]! : null,
      eventType: "SUBMIT",
      timestamp: T0 + i * 100,
      data: i % 2 === 0 ? [{ key: "fever", value: i % 4 === 0 ? "yes" : "no", dtype: "string" }] : [],
    }));
    reportIds = (await t.database.db.insert(reports).values(reportRows).returning({ id: reports.id })).map((r) => r.id);
    const [otherReport] = await t.database.db
      .insert(reports)
      .values({ studyKey: "diet-study", participantId: "q1", key: "symptoms", eventType: "SUBMIT", timestamp: T0 })
      .returning({ id: reports.id });
    otherReportId = otherReport!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe("participants", () => {
    it("lists a page in participant-id order with CASE's pagination, at both slashes", async () => {
      for (const path of [`${BASE}/participants`, `${BASE}/participants/`]) {
        const { status, body } = await get(path);
        expect(status).toBe(200);
        expect(ids(body.participants)).toEqual(participantIds.slice(0, 10));
        expect(body.pagination).toEqual({ totalCount: 25, currentPage: 1, totalPages: 3, pageSize: 10 });
      }
      const first = (await get(`${BASE}/participants${q({ limit: "1" })}`)).body.participants as Json[];
      expect(first[0]).toEqual({
        id: expect.any(String),
        participantId: "p00",
        currentStudySession: "",
        modifiedAt: T0,
        enteredAt: T0,
        studyStatus: "active",
        flags: { group: "a" },
        linkingCodes: {},
        assignedSurveys: [],
        lastSubmissions: {},
        messages: [],
      });
    });

    it("filters and sorts as Mongo would", async () => {
      const { status, body } = await get(
        `${BASE}/participants${q({ filter: { studyStatus: "active", "flags.group": { $in: ["a"] } }, sort: { enteredAt: -1 }, limit: "100" })}`,
      );
      expect(status).toBe(200);
      const expected = participantIds
        .map((id, i) => ({ id, i, enteredAt: T0 + (i % 5) * 100 }))
        .filter(({ i }) => i % 2 === 0 && i % 3 === 0)
        .sort((a, b) => b.enteredAt - a.enteredAt || a.id.localeCompare(b.id) * -1)
        .map(({ id }) => id);
      expect(ids(body.participants)).toEqual(expected);
      expect(body.pagination).toEqual({ totalCount: expected.length, currentPage: 1, totalPages: 1, pageSize: 100 });
    });

    it("pages through everything in order, deep pages seeking from remembered boundaries, and past the end", async () => {
      const sort = { enteredAt: 1 };
      const expected = participantIds
        .map((id, i) => ({ id, enteredAt: T0 + (i % 5) * 100 }))
        .sort((a, b) => a.enteredAt - b.enteredAt || a.id.localeCompare(b.id))
        .map(({ id }) => id);
      // page 3 first (nothing remembered: a plain skip), then every page in turn (each from the last one's end)
      const cold = await get(`${BASE}/participants${q({ sort, limit: "7", page: "3" })}`);
      expect(ids(cold.body.participants)).toEqual(expected.slice(14, 21));
      const seen: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const { body } = await get(`${BASE}/participants${q({ sort, limit: "7", page: String(page) })}`);
        expect(body.pagination).toEqual({ totalCount: 25, currentPage: page, totalPages: 4, pageSize: 7 });
        seen.push(...ids(body.participants));
      }
      expect(seen).toEqual(expected);
      // and again, now every boundary is known
      const warm = await get(`${BASE}/participants${q({ sort, limit: "7", page: "3" })}`);
      expect(ids(warm.body.participants)).toEqual(expected.slice(14, 21));
      const past = await get(`${BASE}/participants${q({ sort, limit: "7", page: "9" })}`);
      expect(past.body.participants).toEqual([]);
      expect(past.body.pagination).toEqual({ totalCount: 25, currentPage: 9, totalPages: 4, pageSize: 7 });
      // fewer rows than a page: page 1 whatever was asked, as case-backend answers
      const small = await get(`${BASE}/participants${q({ limit: "100", page: "3" })}`);
      expect(small.body.pagination).toEqual({ totalCount: 25, currentPage: 1, totalPages: 1, pageSize: 100 });
      expect(ids(small.body.participants)).toHaveLength(25);
    });

    it("gets one participant; unknown ones and another study's are 404", async () => {
      const { status, body } = await get(`${BASE}/participants/p03`);
      expect(status).toBe(200);
      expect(body.participant).toMatchObject({ participantId: "p03", studyStatus: "exited", flags: { group: "a" } });
      // gin redirects the trailing slash; both are served
      expect((await get(`${BASE}/participants/p03/`)).status).toBe(200);
      expect((await get(`${BASE}/participants/nobody`)).status).toBe(404);
      expect((await get(`${BASE}/participants/q1`)).status).toBe(404);
      expect((await get(`/v1/studies/no-such-study/data-explorer/participants/p03`)).status).toBe(404);
    });

    it("400s naming the bad operator, field, JSON, page or limit", async () => {
      const cases: [string, RegExp][] = [
        [q({ filter: { studyStatus: { $regex: "^a" } } }), /unsupported operator "\$regex"/],
        [q({ filter: { $where: "sleep(1)" } }), /unsupported operator "\$where"/],
        [q({ filter: { password: "x" } }), /unknown field "password"/],
        [q({ filter: { enteredAt: "yesterday" } }), /filter\.enteredAt: expected whole Unix seconds/],
        ["?filter=%7Bnot-json", /^filter: not valid JSON/],
        [q({ sort: { flags: 1 } }), /sort: cannot sort on "flags"/],
        [q({ sort: { enteredAt: "up" } }), /sort\.enteredAt: expected 1 or -1/],
        ["?page=abc", /query\.page/],
        ["?limit=ten", /query\.limit/],
      ];
      for (const [query, message] of cases) {
        const { status, body } = await get(`${BASE}/participants${query}`);
        expect(status, query).toBe(400);
        expect(body.error, query).toMatch(message);
      }
    });
  });

  describe("security", () => {
    it("401 without a token, on every route", async () => {
      for (const path of [
        "/participants",
        "/participants/p01",
        "/responses?surveyKey=weekly",
        `/responses/${responseIds[0]}`,
        "/reports",
        "/reports/keys",
        `/reports/${reportIds[0]}`,
        "/files",
      ]) {
        expect((await t.app.request(`${BASE}${path}`)).status, path).toBe(401);
      }
      expect((await t.app.request(`${BASE}/responses?surveyKey=weekly`, { method: "DELETE" })).status).toBe(401);
    });

    it("403 without the route's permission, or for another study", async () => {
      const reader = await researcher(t, "flu-watch", "get-responses");
      expect((await get(`${BASE}/responses?surveyKey=weekly`, reader.token)).status).toBe(200);
      expect((await get(`${BASE}/participants`, reader.token)).status).toBe(403);
      expect((await get(`${BASE}/reports`, reader.token)).status).toBe(403);
      expect((await get(`${BASE}/reports/keys`, reader.token)).status).toBe(403);
      expect((await get(`/v1/studies/diet-study/data-explorer/responses?surveyKey=weekly`, reader.token)).status).toBe(
        403,
      );
      const deleting = await del(
        `${BASE}/responses${q({ surveyKey: "weekly", controlField: "flu-watch" })}`,
        reader.token,
      );
      expect(deleting.status).toBe(403);
      expect((await del(`${BASE}/responses/${responseIds[0]}`, reader.token)).status).toBe(403);
      const states = await researcher(t, "flu-watch", "get-participant-states");
      expect((await get(`${BASE}/participants`, states.token)).status).toBe(200);
      expect((await get(`${BASE}/responses?surveyKey=weekly`, states.token)).status).toBe(403);
      const reportsReader = await researcher(t, "flu-watch", "get-reports");
      expect((await get(`${BASE}/reports`, reportsReader.token)).status).toBe(200);
      expect((await get(`${BASE}/participants/p01`, reportsReader.token)).status).toBe(403);
    });
  });

  describe("responses", () => {
    it("lists one survey's responses as flat CASE objects, by submission time", async () => {
      const { status, body } = await get(`${BASE}/responses${q({ surveyKey: "weekly", limit: "5" })}`);
      expect(status).toBe(200);
      expect(body.pagination).toEqual({ totalCount: 12, currentPage: 1, totalPages: 3, pageSize: 5 });
      const rows = body.responses as Json[];
      expect(rows).toHaveLength(5);
      // oldest submission first: the last inserted
      expect(rows.map((row) => row.participantID)).toEqual(["p11", "p10", "p09", "p08", "p07"]);
      expect(rows[0]).toMatchObject({
        ID: expect.any(String),
        participantID: "p11",
        version: version,
        submitted: T0 + 1000 - 110,
      });
      expect(Object.keys(rows[0]!).some((key) => key.startsWith("weekly.Q1"))).toBe(true);
    });

    it("filters and sorts responses; surveyKey is required", async () => {
      const filtered = await get(
        `${BASE}/responses${q({ surveyKey: "weekly", filter: { participantID: { $in: ["p01", "p02"] } }, sort: { submittedAt: -1 } })}`,
      );
      expect(filtered.status).toBe(200);
      expect((filtered.body.responses as Json[]).map((row) => row.participantID)).toEqual(["p01", "p02"]);
      // the survey key wins over the filter's key, as in case-backend
      const keyed = await get(`${BASE}/responses${q({ surveyKey: "intake", filter: { key: "weekly" } })}`);
      expect(keyed.body.pagination).toMatchObject({ totalCount: 3 });
      const missing = await get(`${BASE}/responses`);
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe("surveyKey is required");
      const bad = await get(`${BASE}/responses${q({ surveyKey: "weekly", filter: { context: "x" } })}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/unknown field "context"/);
    });

    it("gets one response; unknown ids and another study's are 404", async () => {
      const { status, body } = await get(`${BASE}/responses/${responseIds[3]}`);
      expect(status).toBe(200);
      expect(body.response).toMatchObject({ ID: responseIds[3], participantID: "p03" });
      expect((await get(`${BASE}/responses/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
      expect((await get(`${BASE}/responses/not-a-uuid`)).status).toBe(404);
      expect((await get(`${BASE}/responses/${otherResponseId}`)).status).toBe(404);
    });

    it("deletes by filter only with the study key as controlField, audited, bounded by the survey", async () => {
      const count = async (key: string, studyKey = "flu-watch") =>
        (
          await t.database.db
            .select({ id: surveyResponses.id })
            .from(surveyResponses)
            .where(and(eq(surveyResponses.studyKey, studyKey), eq(surveyResponses.key, key)))
        ).length;
      const refused = await del(`${BASE}/responses${q({ surveyKey: "weekly" })}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/controlField/);
      const wrong = await del(`${BASE}/responses${q({ surveyKey: "weekly", controlField: "diet-study" })}`);
      expect(wrong.status).toBe(400);
      const noSurvey = await del(`${BASE}/responses${q({ controlField: "flu-watch" })}`);
      expect(noSurvey.status).toBe(400);
      expect(noSurvey.body.error).toBe("surveyKey is required");
      const badFilter = await del(
        `${BASE}/responses${q({ surveyKey: "weekly", controlField: "flu-watch", filter: { $nor: [] } })}`,
      );
      expect(badFilter.status).toBe(400);
      expect(await count("weekly")).toBe(12);

      const deleter = await researcher(t, "flu-watch", "delete-responses");
      const one = await del(
        `${BASE}/responses/${q({ surveyKey: "weekly", controlField: "flu-watch", filter: { participantID: "p11" } })}`,
        deleter.token,
      );
      expect(one).toEqual({ status: 200, body: { message: "study responses deleted", count: 1 } });
      expect(await count("weekly")).toBe(11);
      const [audit] = await t.database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.studyKey, "flu-watch"), eq(auditLog.action, "responses.delete")));
      expect(audit).toMatchObject({
        actor: deleter.subject,
        target: "weekly",
        details: { filter: { participantID: "p11", key: "weekly" }, count: 1 },
      });
      // the cached count of the list forgot the deleted row
      expect((await get(`${BASE}/responses${q({ surveyKey: "weekly", limit: "5" })}`)).body.pagination).toMatchObject({
        totalCount: 11,
      });
      const none = await del(
        `${BASE}/responses${q({ surveyKey: "weekly", controlField: "flu-watch", filter: { participantID: "p11" } })}`,
      );
      expect(none.status).toBe(404);

      // an empty filter: every response of that survey, no other survey's, no other study's
      const all = await del(`${BASE}/responses${q({ surveyKey: "weekly", controlField: "flu-watch" })}`);
      expect(all).toEqual({ status: 200, body: { message: "study responses deleted", count: 11 } });
      expect(await count("weekly")).toBe(0);
      expect(await count("intake")).toBe(3);
      expect(await count("weekly", "diet-study")).toBe(1);
    });

    it("deletes one response, audited; then it is gone", async () => {
      const [row] = await t.database.db
        .select({ id: surveyResponses.id })
        .from(surveyResponses)
        .where(and(eq(surveyResponses.studyKey, "flu-watch"), eq(surveyResponses.key, "intake")))
        .limit(1);
      expect(await del(`${BASE}/responses/${row!.id}`)).toEqual({
        status: 200,
        body: { message: "study response deleted" },
      });
      expect((await del(`${BASE}/responses/${row!.id}`)).status).toBe(404);
      expect((await del(`${BASE}/responses/${otherResponseId}`)).status).toBe(404);
      expect((await del(`${BASE}/responses/nope`)).status).toBe(404);
      const [audit] = await t.database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "response.delete"), eq(auditLog.target, row!.id)));
      expect(audit).toMatchObject({ actor: "root", details: { surveyKey: "intake" } });
    });
  });

  describe("reports", () => {
    it("lists the distinct report keys, narrowed by pid and time", async () => {
      expect((await get(`${BASE}/reports/keys`)).body).toEqual({ reportKeys: ["symptoms", "vaccination"] });
      expect((await get(`${BASE}/reports/keys/`)).body).toEqual({ reportKeys: ["symptoms", "vaccination"] });
      // p01 has reports 1, 5, 9, 13: none of them a multiple of 3 but 9
      expect((await get(`${BASE}/reports/keys?pid=p01&until=${T0 + 800}`)).body).toEqual({ reportKeys: ["symptoms"] });
      expect((await get(`${BASE}/reports/keys?from=${T0 + 2000}`)).body).toEqual({ reportKeys: [] });
      const bad = await get(`${BASE}/reports/keys?from=yesterday`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/from/);
    });

    it("lists reports newest first in CASE's shape, with reportKey, pid, from, until and filter", async () => {
      const { status, body } = await get(`${BASE}/reports${q({ limit: "4" })}`);
      expect(status).toBe(200);
      expect(body.pagination).toEqual({ totalCount: 15, currentPage: 1, totalPages: 4, pageSize: 4 });
      const rows = body.reports as Json[];
      expect(rows.map((row) => row.timestamp)).toEqual([T0 + 1400, T0 + 1300, T0 + 1200, T0 + 1100]);
      expect(rows[0]).toEqual({
        id: reportIds[14],
        key: "symptoms",
        participantID: "p02",
        responseID: "",
        timestamp: T0 + 1400,
        modifiedAt: "0001-01-01T00:00:00Z",
        data: [{ key: "fever", value: "no", dtype: "string" }],
      });
      expect(rows[1]).not.toHaveProperty("data");

      const narrowed = await get(
        `${BASE}/reports${q({ reportKey: "vaccination", from: String(T0 + 300), until: String(T0 + 900), limit: "50" })}`,
      );
      expect((narrowed.body.reports as Json[]).map((row) => row.timestamp)).toEqual([T0 + 900, T0 + 600, T0 + 300]);
      const byData = await get(`${BASE}/reports${q({ filter: { "data.value": "yes" }, limit: "50" })}`);
      expect((byData.body.reports as Json[]).map((row) => row.timestamp)).toEqual([T0 + 1200, T0 + 800, T0 + 400, T0]);
      const byResponse = await get(`${BASE}/reports${q({ filter: { responseID: responseIds[0] } })}`);
      expect((byResponse.body.reports as Json[]).map((row) => row.id)).toEqual([reportIds[0]]);
      const bad = await get(`${BASE}/reports${q({ filter: { "data.value": { $gt: "a" } } })}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/\$gt is not offered on data\.value/);
    });

    it("pages reports with sequential and repeated deep pages agreeing", async () => {
      const all: unknown[] = [];
      for (let page = 1; page <= 4; page++) {
        all.push(
          ...((await get(`${BASE}/reports${q({ limit: "4", page: String(page) })}`)).body.reports as Json[]).map(
            (r) => r.id,
          ),
        );
      }
      expect(all).toHaveLength(15);
      expect(new Set(all).size).toBe(15);
      const again = (await get(`${BASE}/reports${q({ limit: "4", page: "3" })}`)).body.reports as Json[];
      expect(again.map((r) => r.id)).toEqual(all.slice(8, 12));
    });

    it("gets one report; unknown ones and another study's are 404", async () => {
      const { status, body } = await get(`${BASE}/reports/${reportIds[0]}`);
      expect(status).toBe(200);
      expect(body.report).toMatchObject({ id: reportIds[0], responseID: responseIds[0], participantID: "p00" });
      expect((await get(`${BASE}/reports/${reportIds[0]}/`)).status).toBe(200);
      expect((await get(`${BASE}/reports/${otherReportId}`)).status).toBe(404);
      expect((await get(`${BASE}/reports/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    });
  });

  describe("participant files (none uploaded in this study)", () => {
    it("lists none in CASE's shape; a file is 404", async () => {
      expect(await get(`${BASE}/files`)).toEqual({
        status: 200,
        body: { fileInfos: [], pagination: { totalCount: 0, currentPage: 1, totalPages: 0, pageSize: 10 } },
      });
      expect((await get(`${BASE}/files/`)).status).toBe(200);
      expect((await get(`${BASE}/files/abc`)).status).toBe(404);
      expect((await del(`${BASE}/files/abc`)).status).toBe(404);
      expect((await get(`/v1/studies/no-such-study/data-explorer/files`)).status).toBe(404);
    });
  });

  it("documents every route under the data-explorer tag", async () => {
    const response = await t.app.request("/openapi.json");
    const document = (await response.json()) as { paths: Record<string, Record<string, { tags?: string[] }>> };
    const explorer = Object.entries(document.paths).filter(([path]) => path.includes("/data-explorer"));
    const operations = explorer.flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.map(({ method, path }) => `${method} ${path.replace(/^.*data-explorer/, "")}`).sort()).toEqual([
      "delete /files/{fileID}",
      "delete /responses",
      "delete /responses/{responseID}",
      "get /files",
      "get /files/{fileID}",
      "get /participants",
      "get /participants/{participantID}",
      "get /reports",
      "get /reports/keys",
      "get /reports/{reportID}",
      "get /responses",
      "get /responses/{responseID}",
    ]);
    for (const { op } of operations) expect(op.tags).toEqual(["data-explorer"]);
  });
});
