import { mkdtemp, rm } from "node:fs/promises";
import { eq } from "drizzle-orm";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confidentialResponses, reports, surveyResponses, tasks } from "@studyflow/db";
import { setDailyExportConfig, startDailyExports } from "@studyflow/domain/exports";
import { systemClock } from "@studyflow/domain/foundation";
import { confidentialIdOf } from "@studyflow/domain/participants";
import { grantPermission } from "@studyflow/domain/study-setup";
import { queueTask } from "@studyflow/queue";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { insertParticipant, managementToken, setupStudy } from "./fixtures";
import { caseResponse, caseSurvey, uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

/**
 * case-admin's exporter and data-explorer pages, replayed against studyflow as case-admin makes
 * its calls: every call of `case-clients/case-admin-calls.json` on these pages (the table below
 * copies them: function, method, URL as the code builds it), with the query strings its code
 * builds (URLSearchParams, the response filter encoded twice as startResponseExport does),
 * no body where it sends none, a Bearer token, and the answer read as case-admin reads it: only
 * `status !== 200` (`> 200` for deletes) is checked, then the fields it takes. The browser
 * downloads go through case-admin's proxy route, which forwards the GET with the token and keeps
 * only Content-Type and Content-Disposition, and POSTs the JSON body again with no Content-Type
 * (so fetch sends text/plain). A real worker runs the exports.
 */

/** The calls of case-admin-calls.json on the exporter and data-explorer pages (file, function, method, URL). */
const LISTED_CALLS = [
  [
    "actions/study/files.ts",
    "deleteParticipantFile",
    "DELETE",
    "/v1/studies/${studyKey}/data-explorer/files/${fileId}",
  ],
  [
    "actions/study/responses.ts",
    "deleteResponses",
    "DELETE",
    "/v1/studies/${studyKey}/data-explorer/responses?${queryString}",
  ],
  ["lib/data/fileInfos.ts", "getFileInfos", "GET", "/v1/studies/${studyKey}/data-explorer/files?${queryString}"],
  [
    "lib/data/participants.ts",
    "getParticipants",
    "GET",
    "/v1/studies/${studyKey}/data-explorer/participants?${queryString}",
  ],
  [
    "lib/data/participants.ts",
    "getParticipantById",
    "GET",
    "/v1/studies/${studyKey}/data-explorer/participants/${participantId}",
  ],
  [
    "lib/data/participants.ts",
    "getParticipantCount",
    "GET",
    "/v1/studies/${studyKey}/data-exporter/participants/count?${queryString}",
  ],
  ["lib/data/reports.ts", "getReportKeys", "GET", "/v1/studies/${studyKey}/data-explorer/reports/keys?${queryString}"],
  ["lib/data/reports.ts", "getReports", "GET", "/v1/studies/${studyKey}/data-explorer/reports?${queryString}"],
  [
    "lib/data/reports.ts",
    "getReportCount",
    "GET",
    "/v1/studies/${studyKey}/data-exporter/reports/count?${queryString}",
  ],
  ["lib/data/responses.ts", "getResponses", "GET", "/v1/studies/${studyKey}/data-explorer/responses?${queryString}"],
  [
    "lib/data/responses.ts",
    "startResponseExport",
    "POST",
    "/v1/studies/${studyKey}/data-exporter/responses?${queryString}",
  ],
  [
    "lib/data/responses.ts",
    "getDailyResponseExports",
    "GET",
    "/v1/studies/${studyKey}/data-exporter/responses/daily-exports?${queryString}",
  ],
  [
    "lib/data/responses.ts",
    "getAvailableConfidentialResponseExports",
    "GET",
    "/v1/studies/${studyKey}/data-exporter/confidential-responses",
  ],
  ["lib/data/tasks.ts", "startFileExportTask", "POST", "${url}?${queryString}"],
  ["lib/data/tasks.ts", "getTaskProgress", "GET", "${resourceUrl}/task/${taskID}"],
] as const;

const STUDY = "demo-study";
const SECRET = "demo-study-secret-0123456789";
/** The exporter page's date range (its from/until pickers), Unix seconds. */
const FROM = 1_780_000_000;
const UNTIL = 1_780_500_000;

describe("case-admin's exporter and data-explorer, replayed", () => {
  let t: TestApp;
  let token: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let resultDir: string;
  const replayed = new Set<string>();

  /** fetchCASEManagementAPI: the Bearer token, the body if any, `{status, body}` from JSON or statusText. */
  async function fetchCASEManagementAPI(func: string, pathname: string, init: { method?: string; body?: string } = {}) {
    replayed.add(func);
    const res = await t.app.request(pathname, {
      method: init.method ?? "GET",
      headers: { Authorization: `Bearer ${token}` },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    try {
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    } catch {
      return { status: res.status, body: { error: res.statusText } as Record<string, any> };
    }
  }

  /** The proxy route `/api/case-management-api/[...segments]` as the browser downloads through it. */
  async function proxyGet(pathname: string) {
    const res = await t.app.request(pathname, {
      headers: { Authorization: `Bearer ${token}`, "Accept-Encoding": "gzip, deflate" },
    });
    // undici decompresses a gzip body for the proxy; it forwards the rest as is
    let bytes = Buffer.from(await res.arrayBuffer());
    if (res.headers.get("Content-Encoding") === "gzip") bytes = gunzipSync(bytes);
    return {
      status: res.status,
      contentType: res.headers.get("Content-Type") || "application/json",
      contentDisposition: res.headers.get("Content-Disposition") || "",
      text: bytes.toString("utf8"),
    };
  }

  /** ExportTaskTracker: polls getTaskProgress until `completed`, then downloads `${prefix}/task/${id}/result`. */
  async function trackAndDownload(taskURLPrefix: string, taskID: string) {
    let task: Record<string, any> | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const resp = await fetchCASEManagementAPI("getTaskProgress", `${taskURLPrefix}/task/${taskID}`);
      expect(resp.status).toBe(200);
      expect(resp.body.error).toBeUndefined();
      task = resp.body.task as Record<string, any>;
      if (task.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(task?.status).toBe("completed");
    expect(task?.error).toBeFalsy();
    expect(task?.processedCount).toBe(task?.targetCount);
    const file = await proxyGet(`${taskURLPrefix}/task/${taskID}/result`);
    expect(file.status).toBe(200);
    // the tracker names the download with everything after `filename=`
    const filename = file.contentDisposition.split("filename=")[1];
    expect(filename).toMatch(/^[A-Za-z0-9._-]+$/);
    return { ...file, filename: filename!, task: task! };
  }

  beforeAll(async () => {
    t = await createTestApp();
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-replay-"));
    worker = startWorkerBesideApi(t, resultDir, { batchSize: 2, chunkSize: 3 });
    await setupStudy(t, { key: STUDY, secret: SECRET, trackAccount: true });
    // a researcher with the rights case-admin's exporter and explorer pages use, no admin flag
    const subject = "researcher-anna";
    for (const action of [
      "read-study-config",
      "get-responses",
      "delete-responses",
      "get-participant-states",
      "get-reports",
      "get-confidential-responses",
    ] as const) {
      await grantPermission(t.database.db, subject, STUDY, action);
    }
    token = await managementToken(t, subject);
    const admin = await managementToken(t, "root", true);
    const weeklyVersion = await uploadSurvey(t, STUDY, admin, caseSurvey("weekly"));
    await uploadSurvey(t, STUDY, admin, caseSurvey("intake"));
    const response = caseResponse("weekly", weeklyVersion);
    for (let i = 1; i <= 7; i++) {
      const participantId = `p${i}`;
      await insertParticipant(t.database.db, {
        studyKey: STUDY,
        participantId,
        studyStatus: i === 7 ? "exited" : "active",
        flags: { group: i % 2 === 0 ? "even" : "odd" },
        ...(i === 1 ? { hashedAccountId: "acct-hash-p1", isMainProfile: true } : {}),
      });
      await t.database.db.insert(surveyResponses).values({
        studyKey: STUDY,
        participantId,
        key: "weekly",
        versionId: weeklyVersion,
        openedAt: response.openedAt,
        submittedAt: FROM + i * 1_000,
        // p7's response arrived after the exporter's range
        arrivedAt: i === 7 ? UNTIL + 10 : FROM + i * 1_000 + 5,
        responses: response.responses,
        context: response.context,
      });
      await t.database.db.insert(reports).values({
        studyKey: STUDY,
        participantId,
        key: i <= 4 ? "symptoms" : "kit",
        eventType: "SUBMIT",
        timestamp: FROM + i * 1_000 + 10,
        data: [{ key: "fever", value: i % 2 === 0 ? "yes" : "no", dtype: "string" }],
      });
    }
    await t.database.db.insert(confidentialResponses).values({
      studyKey: STUDY,
      confidentialId: confidentialIdOf(SECRET, "p1"),
      key: "intake.Q9",
      responses: [{ key: "intake.Q9", response: { key: "rg", items: [{ key: "email", value: "anna@example.org" }] } }],
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await rm(resultDir, { recursive: true, force: true });
  });

  it("responses exporter: survey codebook, start an export for a date range, follow it, download CASE's CSV", async () => {
    // SurveyInfoDownloader (browser, through the proxy)
    const infoQuery = new URLSearchParams();
    infoQuery.append("surveyKey", "weekly");
    infoQuery.append("format", "csv");
    infoQuery.append("language", "en");
    infoQuery.append("shortKeys", "false");
    const info = await proxyGet(`/v1/studies/${STUDY}/data-exporter/survey-info?${infoQuery.toString()}`);
    expect(info.status).toBe(200);
    expect(info.contentDisposition.split("filename=")[1]?.replaceAll('"', "")).toBe(
      "survey-infos_demo-study_weekly.csv",
    );
    expect(info.text.split("\n")[0]).toBe(
      "surveyKey,versionID,questionKey,title,responseKey,type,optionKey,optionType,optionLabel",
    );

    // startResponseExport: the filter encoded by hand, then again by URLSearchParams; no body
    const queryParams = new URLSearchParams();
    const filter = { $and: [{ arrivedAt: { $gt: FROM } }, { arrivedAt: { $lt: UNTIL } }] };
    queryParams.append("filter", encodeURIComponent(JSON.stringify(filter)));
    queryParams.append("format", "wide");
    queryParams.append("questionOptionSep", "-");
    queryParams.append("surveyKey", "weekly");
    queryParams.append("shortKeys", "false");
    queryParams.append("extraContextColumns", ["accountID", "mainProfile"].join(","));
    const started = await fetchCASEManagementAPI(
      "startResponseExport",
      `/v1/studies/${STUDY}/data-exporter/responses?${queryParams.toString()}`,
      { method: "POST" },
    );
    expect(started.status).toBe(200);
    expect(started.body.error).toBeUndefined();
    const task = started.body.task as { id: string; targetCount: number };
    expect(task.targetCount).toBe(6);

    const file = await trackAndDownload(`/v1/studies/${STUDY}/data-exporter/responses`, task.id);
    expect(file.contentType).toBe("text/csv");
    expect(file.filename).toMatch(/\.csv$/);
    const lines = file.text.trimEnd().split("\n");
    const header = lines[0]!.split(",");
    expect(header.slice(0, 1)).toEqual(["ID"]);
    expect(header).toContain("participantID");
    // the study tracks accounts: CASE's two account columns are in the file
    expect(header).toContain("accountID");
    expect(header).toContain("mainProfile");
    expect(lines).toHaveLength(1 + 6);
    const participantColumn = header.indexOf("participantID");
    expect(lines.slice(1).map((line) => line.split(",")[participantColumn])).toEqual([
      "p1",
      "p2",
      "p3",
      "p4",
      "p5",
      "p6",
    ]);
    // the study tracks accounts: the participant's hashed account id and main-profile flag are in its row
    const p1 = lines[1]!.split(",");
    expect(p1[header.indexOf("accountID")]).toBe("acct-hash-p1");
    expect(p1[header.indexOf("mainProfile")]).toBe("true");

    // a survey without responses: case-admin shows the error the 200 answer carries
    const none = await fetchCASEManagementAPI(
      "startResponseExport",
      `/v1/studies/${STUDY}/data-exporter/responses?surveyKey=intake&format=wide`,
      { method: "POST" },
    );
    expect(none.status).toBe(200);
    expect(none.body.task).toBeUndefined();
    expect(none.body.error).toBe("no responses to export");
  });

  it("responses exporter: daily exports list and download; prepared confidential files; confidential responses", async () => {
    // yesterday's export of the weekly survey, as the daily job records it; a worker runs it
    await setDailyExportConfig(
      t.database.db,
      STUDY,
      {
        surveyKeys: ["weekly"],
        options: {
          format: "wide",
          questionOptionSep: "-",
          shortKeys: false,
          extraContextColumns: [],
          includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
          gzip: true,
        },
        enabled: true,
      },
      "root",
      { clock: systemClock },
    );
    const dayEnd = Math.floor(FROM / 86_400) * 86_400 + 86_400;
    const [started] = await startDailyExports(t.database.db, {
      clock: systemClock,
      now: (dayEnd + 3_600) * 1000,
      queue: (task) => queueTask(t.deps.taskQueue, task),
    });
    const day = new Date((dayEnd - 86_400) * 1000).toISOString().slice(0, 10);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, started!.task!.id));
      if (row?.status === "completed" || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // getDailyResponseExports reads `dailyExports`; the loader splits each name at "##"
    const daily = await fetchCASEManagementAPI(
      "getDailyResponseExports",
      `/v1/studies/${STUDY}/data-exporter/responses/daily-exports?${new URLSearchParams().toString()}`,
    );
    expect(daily.status).toBe(200);
    const names = daily.body.dailyExports as string[];
    expect(names).toEqual([`${day}##responses##weekly##wide.csv`]);
    const parts = names[0]!.split("##");
    expect({ date: parts[0], surveyKey: parts[2], type: parts[3]!.split(".")[0] }).toEqual({
      date: day,
      surveyKey: "weekly",
      type: "wide",
    });
    // dail-exports-client: btoa(filename) in the path, through the proxy
    const file = await proxyGet(`/v1/studies/${STUDY}/data-exporter/responses/daily-exports/${btoa(names[0]!)}`);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe("text/csv");
    expect(file.text.trimEnd().split("\n")).toHaveLength(1 + 6);

    const confidentialFiles = await fetchCASEManagementAPI(
      "getAvailableConfidentialResponseExports",
      `/v1/studies/${STUDY}/data-exporter/confidential-responses`,
    );
    expect(confidentialFiles.status).toBe(200);
    expect(confidentialFiles.body.availableFiles).toEqual([]);

    // ConfidentialResponseDownloader → the proxy's POST: body parsed and sent again without a Content-Type
    const res = await t.app.request(`/v1/studies/${STUDY}/data-exporter/confidential-responses`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
      body: JSON.stringify({ participantIDs: ["p1", "p2"], keyFilter: "" }),
    });
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      responses: [
        {
          participantID: "p1",
          entryID: expect.any(String),
          responseKey: "intake.Q9-rg.email",
          value: "anna@example.org",
        },
      ],
    });
  });

  it("participants exporter: count with a filter, start with an empty query, follow, download the JSON", async () => {
    const filter = JSON.stringify({ studyStatus: "active" });
    const countQuery = new URLSearchParams();
    countQuery.append("filter", filter);
    const count = await fetchCASEManagementAPI(
      "getParticipantCount",
      `/v1/studies/${STUDY}/data-exporter/participants/count?${countQuery.toString()}`,
    );
    expect(count.status).toBe(200);
    expect(count.body.count).toBe(6);

    // startParticipantExport → startFileExportTask(url, filter?, sort?) with neither: the URL ends in "?"
    const started = await fetchCASEManagementAPI(
      "startFileExportTask",
      `/v1/studies/${STUDY}/data-exporter/participants?${new URLSearchParams().toString()}`,
      { method: "POST" },
    );
    expect(started.status).toBe(200);
    const task = started.body.task as { id: string; targetCount: number };
    expect(task.targetCount).toBe(7);
    const file = await trackAndDownload(`/v1/studies/${STUDY}/data-exporter/participants`, task.id);
    expect(file.contentType).toMatch(/^application\/json/);
    const document = JSON.parse(file.text) as {
      participants: { participantId: string; flags: Record<string, string> }[];
    };
    expect(document.participants.map((p) => p.participantId)).toEqual(["p1", "p2", "p3", "p4", "p5", "p6", "p7"]);
    expect(document.participants[1]!.flags).toEqual({ group: "even" });

    // with a filter, as the participant page's export button sends it
    const filtered = new URLSearchParams();
    filtered.append("filter", JSON.stringify({ "flags.group": "even" }));
    const second = await fetchCASEManagementAPI(
      "startFileExportTask",
      `/v1/studies/${STUDY}/data-exporter/participants?${filtered.toString()}`,
      { method: "POST" },
    );
    expect(second.status).toBe(200);
    expect((second.body.task as { targetCount: number }).targetCount).toBe(3);
  });

  it("reports exporter: count by key and range, start a CSV export, follow, download", async () => {
    const queryParams = new URLSearchParams();
    queryParams.append("reportKey", "symptoms");
    queryParams.append("from", Math.floor(FROM).toString());
    queryParams.append("until", Math.floor(UNTIL).toString());
    const count = await fetchCASEManagementAPI(
      "getReportCount",
      `/v1/studies/${STUDY}/data-exporter/reports/count?${queryParams.toString()}`,
    );
    expect(count.status).toBe(200);
    expect(count.body.count).toBe(4);

    queryParams.append("type", "csv");
    const started = await fetchCASEManagementAPI(
      "startFileExportTask",
      `/v1/studies/${STUDY}/data-exporter/reports?${queryParams.toString()}`,
      { method: "POST" },
    );
    expect(started.status).toBe(200);
    const task = started.body.task as { id: string };
    const file = await trackAndDownload(`/v1/studies/${STUDY}/data-exporter/reports`, task.id);
    expect(file.contentType).toBe("text/csv");
    const lines = file.text.trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 4);
    expect(lines[0]).toMatch(/fever/);
  });

  it("study config exporter: the config file downloads under CASE's name", async () => {
    const queryParams = new URLSearchParams();
    queryParams.append("config", "true");
    queryParams.append("surveys", "true");
    queryParams.append("rules", "false");
    const file = await proxyGet(`/v1/studies/${STUDY}/export-config?${queryParams.toString()}`);
    expect(file.status).toBe(200);
    expect(file.contentDisposition.split("filename=")[1]).toMatch(/^study_config_demo-study_\d{4}-\d{2}-\d{2}\.json$/);
    const document = JSON.parse(file.text) as { config: { key: string }; surveys: unknown[] };
    expect(document.config.key).toBe(STUDY);
    expect(document.surveys).toHaveLength(2);
  });

  it("data explorer: participants, one participant, reports and their keys, responses, files", async () => {
    const participantsQuery = new URLSearchParams();
    participantsQuery.append("filter", JSON.stringify({ studyStatus: "active" }));
    participantsQuery.append("sort", JSON.stringify({ participantID: 1 }));
    participantsQuery.append("page", "2");
    participantsQuery.append("limit", "4");
    const participants = await fetchCASEManagementAPI(
      "getParticipants",
      `/v1/studies/${STUDY}/data-explorer/participants?${participantsQuery.toString()}`,
    );
    expect(participants.status).toBe(200);
    expect((participants.body.participants as { participantId: string }[]).map((p) => p.participantId)).toEqual([
      "p5",
      "p6",
    ]);
    expect(participants.body.pagination).toEqual({ totalCount: 6, currentPage: 2, pageSize: 4, totalPages: 2 });

    const one = await fetchCASEManagementAPI(
      "getParticipantById",
      `/v1/studies/${STUDY}/data-explorer/participants/p3`,
    );
    expect(one.status).toBe(200);
    expect((one.body.participant as { participantId: string }).participantId).toBe("p3");

    const keysQuery = new URLSearchParams();
    keysQuery.append("from", Math.floor(FROM).toFixed(0));
    keysQuery.append("until", Math.floor(UNTIL).toFixed(0));
    const keys = await fetchCASEManagementAPI(
      "getReportKeys",
      `/v1/studies/${STUDY}/data-explorer/reports/keys?${keysQuery.toString()}`,
    );
    expect(keys.status).toBe(200);
    expect([...(keys.body.reportKeys as string[])].sort()).toEqual(["kit", "symptoms"]);

    const reportsQuery = new URLSearchParams();
    reportsQuery.append("reportKey", "kit");
    reportsQuery.append("page", "1");
    reportsQuery.append("limit", "10");
    const reportsPage = await fetchCASEManagementAPI(
      "getReports",
      `/v1/studies/${STUDY}/data-explorer/reports?${reportsQuery.toString()}`,
    );
    expect(reportsPage.status).toBe(200);
    expect((reportsPage.body.reports as unknown[]).length).toBe(3);

    const responsesQuery = new URLSearchParams();
    responsesQuery.append("surveyKey", "weekly");
    responsesQuery.append("page", "1");
    responsesQuery.append("limit", "5");
    responsesQuery.append("shortKeys", "false");
    responsesQuery.append("extraContextColumns", ["accountID", "mainProfile"].join(","));
    const responses = await fetchCASEManagementAPI(
      "getResponses",
      `/v1/studies/${STUDY}/data-explorer/responses?${responsesQuery.toString()}`,
    );
    expect(responses.status).toBe(200);
    expect((responses.body.responses as unknown[]).length).toBe(5);

    const filesQuery = new URLSearchParams();
    filesQuery.append("page", "1");
    const files = await fetchCASEManagementAPI(
      "getFileInfos",
      `/v1/studies/${STUDY}/data-explorer/files?${filesQuery.toString()}`,
    );
    expect(files.status).toBe(200);
    expect(files.body.fileInfos).toEqual([]);

    // deleteParticipantFile: case-admin reports an error when status > 200; there are no files
    const deleted = await fetchCASEManagementAPI(
      "deleteParticipantFile",
      `/v1/studies/${STUDY}/data-explorer/files/f1`,
      {
        method: "DELETE",
      },
    );
    expect(deleted.status).toBeGreaterThan(200);
    expect(typeof deleted.body.error).toBe("string");
  });

  it("data explorer: deleting responses needs the confirmation case-admin asks for", async () => {
    const query = (controlField: string) => {
      const queryParams = new URLSearchParams();
      queryParams.append("surveyKey", "weekly");
      queryParams.append("filter", JSON.stringify({ participantID: "p7" }));
      queryParams.append("controlField", controlField || "");
      return queryParams.toString();
    };
    const refused = await fetchCASEManagementAPI(
      "deleteResponses",
      `/v1/studies/${STUDY}/data-explorer/responses?${query("")}`,
      {
        method: "DELETE",
      },
    );
    expect(refused.status).toBeGreaterThan(200);
    const done = await fetchCASEManagementAPI(
      "deleteResponses",
      `/v1/studies/${STUDY}/data-explorer/responses?${query(STUDY)}`,
      {
        method: "DELETE",
      },
    );
    expect(done.status).toBe(200);
    expect(typeof done.body.message).toBe("string");
  });

  it("replays every call case-admin-calls.json lists for these pages", () => {
    expect([...replayed].sort()).toEqual([...new Set(LISTED_CALLS.map(([, func]) => func))].sort());
  });
});
