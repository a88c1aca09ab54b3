import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks, type ResponseExportInput } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { updateStudy } from "@studyflow/domain/study-config";
import { createStudy, grantPermission } from "@studyflow/domain/study-setup";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { screenshot, openConsole, signInToConsole, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console's task list with every kind of task a study has: a researcher's run-actions, the
 * study timer's tick, a finished responses export and a running reports export. Each reads by its
 * own name, an export counts rows and a finished one points to the exports page for its file; the
 * study cards link to a study's participants and exports. The tasks are written as the workers
 * leave them, so the page shows them exactly as a real run would, without waiting for one.
 */

const STUDY = "flu-kinds";
const OTHER = "sleep-kinds";
const HOUR = 3_600_000;

const exportInput: ResponseExportInput = {
  gzip: false,
  surveyKey: "weekly",
  format: "wide",
  questionOptionSep: "-",
  shortKeys: false,
  extraContextColumns: [],
  includeMeta: {},
  order: { field: "submittedAt", direction: "asc" },
  accountColumns: false,
  now: 1_767_225_600,
};

describe("the console's task list knows every kind of task", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let page: Page;
  let researcherToken: string;
  let othersToken: string;
  let exportId: string;
  let runningExportId: string;

  const open = (hash: string) => openConsole(page, base, hash);
  const signIn = (token: string) => signInToConsole(page, base, token);

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-console-kinds-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    const db = t.database.db;
    await createStudy(db, { key: STUDY });
    await updateStudy(db, STUDY, { name: { en: "Flu kinds" } }, "seed", { clock: systemClock });
    await createStudy(db, { key: OTHER });
    await grantPermission(db, "ada", STUDY, "*");
    await grantPermission(db, "ada", OTHER, "*");
    const secret = t.config.MANAGEMENT_JWT_SECRET;
    researcherToken = await mintManagementToken({ now: Date.now(), subject: "ada", isAdmin: false, secret });
    othersToken = await mintManagementToken({ now: Date.now(), subject: "bea", isAdmin: false, secret });
    await grantPermission(db, "bea", STUDY, "*");

    // Oldest first: the tick, the run, the finished export, the export still running.
    const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * HOUR);
    const finished = (hoursAgo: number) => ({
      createdAt: at(hoursAgo),
      updatedAt: at(hoursAgo - 0.1),
      startedAt: at(hoursAgo),
      finishedAt: at(hoursAgo - 0.1),
      status: "completed" as const,
    });
    await db.insert(tasks).values({
      studyKey: STUDY,
      kind: "timer",
      input: {
        dueAt: at(4).toISOString(),
        rulesVersion: 3,
        intervalSeconds: 3_600,
        offsetSeconds: 0,
        defaultInterval: true,
      },
      createdBy: "study-timer",
      targetCount: 40,
      processedCount: 40,
      resultFile: "timer.json",
      ...finished(4),
    });
    await db.insert(tasks).values({
      studyKey: STUDY,
      kind: "run-actions",
      input: { rules: [], dryRun: false },
      createdBy: "ada",
      targetCount: 40,
      processedCount: 40,
      resultFile: "run.json",
      ...finished(3),
    });
    const [done] = await db
      .insert(tasks)
      .values({
        studyKey: STUDY,
        kind: "export-responses",
        input: exportInput,
        createdBy: "ada",
        targetCount: 1_250,
        processedCount: 1_250,
        resultFile: "responses.csv",
        fileType: "text/csv",
        ...finished(2),
      })
      .returning({ id: tasks.id });
    exportId = done!.id;
    const [running] = await db
      .insert(tasks)
      .values({
        studyKey: STUDY,
        kind: "export-reports",
        input: { gzip: false, format: "raw" },
        createdBy: "ada",
        createdAt: at(1),
        updatedAt: at(1),
        startedAt: at(1),
        status: "in_progress",
        targetCount: 800,
        processedCount: 300,
      })
      .returning({ id: tasks.id });
    runningExportId = running!.id;
    // Another researcher's export: not among ada's tasks.
    await db.insert(tasks).values({
      studyKey: STUDY,
      kind: "export-participants",
      input: { gzip: false },
      createdBy: "bea",
      targetCount: 10,
      processedCount: 10,
      resultFile: "participants.csv",
      fileType: "text/csv",
      ...finished(0.5),
    });

    ui = await startConsoleBrowser(t.app.fetch);
    ({ base, page } = ui);
  });

  afterAll(async () => {
    await ui?.close();
    await t?.close();
  });

  it("links each study card to its participants and exports pages", async () => {
    await signIn(researcherToken);
    const card = page.locator(`.study-card[data-study-key="${STUDY}"]`);
    await card.waitFor();
    const nav = card.locator(".study-actions");
    expect(await nav.getByRole("link", { name: "Participants" }).getAttribute("href")).toBe(
      `#/studies/${STUDY}/participants`,
    );
    expect(await nav.getByRole("link", { name: "Exports" }).getAttribute("href")).toBe(`#/studies/${STUDY}/exports`);

    await nav.getByRole("link", { name: "Participants" }).click();
    await page.locator("#page-title", { hasText: `Participants of ${STUDY}` }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/studies/${STUDY}/participants$`));

    await page.goBack();
    const otherCard = page.locator(`.study-card[data-study-key="${OTHER}"]`);
    await otherCard.locator(".study-actions").getByRole("link", { name: "Exports" }).click();
    await page.locator("#page-title", { hasText: `Exports of ${OTHER}` }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/studies/${OTHER}/exports$`));
    await page.getByText("No exports yet.").waitFor();
  });

  it("labels run-actions, a timer tick and exports by their kind, an export's progress in rows", async () => {
    await open(`#/studies/${STUDY}/tasks`);
    const rows = page.locator("table.tasks tbody tr");
    await rows.nth(3).waitFor();
    expect(await rows.count()).toBe(4);
    const kinds = await rows.locator("td:nth-child(2)").allInnerTexts();
    expect(kinds).toEqual(["reports export", "responses export", "run-actions", "timer tick (rules v3)"]);
    const texts = await rows.allInnerTexts();
    expect(texts[0]).toMatch(/reports export\s+running\s+ada\s+.*300 \/ 800 rows/);
    expect(texts[1]).toMatch(/responses export\s+completed\s+ada\s+.+1,250 \/ 1,250 rows/);
    expect(texts[2]).toMatch(/run-actions\s+completed\s+ada\s+.+40 \/ 40 participants/);
    expect(texts[3]).toMatch(/timer tick \(rules v3\)\s+completed\s+study-timer\s+.+40 \/ 40 participants/);
    // Only the finished export points to a file; bea's export is not among ada's tasks.
    const fileLinks = page.locator("table.tasks tbody").getByRole("link", { name: "Download on the exports page" });
    expect(await fileLinks.count()).toBe(1);
    expect(await page.locator(`tr[data-task-id="${exportId}"]`).getByRole("link").count()).toBe(2);
    expect(await page.locator(`tr[data-task-id="${runningExportId}"]`).getByRole("link").count()).toBe(1);
    expect(await page.locator('tr[data-kind="export-participants"]').count()).toBe(0);
    await screenshot(page, "tasks-kinds");

    await fileLinks.click();
    await page.locator("#page-title", { hasText: `Exports of ${STUDY}` }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/studies/${STUDY}/exports$`));
    const recent = page.locator(`table.exports tr[data-task-id="${exportId}"]`);
    await recent.waitFor();
    expect(await recent.innerText()).toMatch(/responses\s+completed/);
    expect(await recent.getByRole("button", { name: "Download" }).count()).toBe(1);
  });

  it("opens an export's task in rows and sends its download to the exports page", async () => {
    await open(`#/studies/${STUDY}/tasks/${exportId}`);
    const view = page.locator(".task-progress");
    await view.locator(".task-result a").waitFor();
    expect(await view.locator("h2").innerText()).toBe(`Responses export ${exportId}`);
    expect(await view.locator(".progress-text").innerText()).toMatch(/^1,250 of 1,250 rows \(100 %\)/);
    const link = view.locator(".task-result").getByRole("link", { name: "the exports page" });
    expect(await link.getAttribute("href")).toBe(`#/studies/${STUDY}/exports`);
    // The run-actions result (a JSON document) is not asked for: an export has none.
    expect(await view.locator(".task-result table.per-rule").count()).toBe(0);
    expect(await page.locator(".notice-error").count()).toBe(0);

    await open(`#/studies/${STUDY}/tasks/${runningExportId}`);
    await page.locator(".task-progress .progress-text").waitFor();
    expect(await page.locator(".task-progress h2").innerText()).toBe(`Reports export ${runningExportId}`);
    expect(await page.locator(".task-progress .progress-text").innerText()).toMatch(/^300 of 800 rows/);
  });

  it("shows another researcher only their own tasks and the timer's", async () => {
    await signIn(othersToken);
    await open(`#/studies/${STUDY}/tasks`);
    const rows = page.locator("table.tasks tbody tr");
    await rows.nth(1).waitFor();
    expect(await rows.locator("td:nth-child(2)").allInnerTexts()).toEqual([
      "participants export",
      "timer tick (rules v3)",
    ]);
    expect(ui.policyViolations).toEqual([]);
  });
});
