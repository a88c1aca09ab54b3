import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dailyExportConfigs, participants, permissions, reports, studies, tasks } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { recordRuleFailures } from "@studyflow/domain/events";
import { setDailyExportConfig, startDailyExports } from "@studyflow/domain/exports";
import { systemClock } from "@studyflow/domain/foundation";
import { updateStudy } from "@studyflow/domain/study-config";
import { createStudy, grantPermission, setStudyRules } from "@studyflow/domain/study-setup";
import { queueTask } from "@studyflow/queue";
import { call, exp, onEvent, str } from "@studyflow/testkit";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import { and, eq } from "drizzle-orm";
import { seedExportStudy } from "../../bench/export-seed";
import {
  documentedScreenshot,
  openConsole,
  signInToConsole,
  startConsoleBrowser,
  type ConsoleBrowser,
} from "./browser";

/**
 * The console's data-out pages in a real browser against the real API and an in-process worker:
 * the participants of a study that looks like a real one (filter, pages, one participant), an
 * export started, followed and downloaded, a study with nothing in it, a researcher without the
 * rights, and participant-controlled text that must stay text.
 */

const STUDY = "grippenet-ch";
const EMPTY = "sleep-diary-pilot";
const MARKUP = "markup-check";
const XSS = '<img src=x onerror="window.__xss=1">';
/** Responses of the weekly survey: ten weeks of 12 participants. */
const RESPONSES = 120;
/** The seed's first week of responses arrives on this day (2023-11-14, UTC). */
const FIRST_DAY = 1_699_920_000;

const csvRows = (text: string) => text.trim().split("\n");

describe("the console's participants and exports pages", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let page: Page;
  let researcherToken: string;
  let strangerToken: string;
  let someParticipant: string;

  /** A screenshot of this realistic study in e2e/screenshots/, and in docs/ with UPDATE_DOCS_SCREENSHOTS=1. */
  const documented = (name: string) => documentedScreenshot(page, name);
  const open = (hash: string) => openConsole(page, base, hash);
  const signIn = (token: string) => signInToConsole(page, base, token);

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-console-data-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    const db = t.database.db;

    // A study as a season of a flu surveillance study looks: the weekly symptoms survey in two
    // versions, participants with hashed ids, consent and region flags, responses and reports.
    await seedExportStudy(t.database, STUDY, RESPONSES);
    await setStudyRules(
      db,
      STUDY,
      [
        onEvent("SUBMIT", call("UPDATE_FLAG", str("lastWeekly"), str("submitted"))),
        onEvent(
          "SUBMIT",
          call(
            "UPDATE_FLAG",
            str("feverReported"),
            exp(call("getResponseValueAsStr", str("weekly.Q11"), str("rg.scg"))),
          ),
        ),
      ],
      "seed",
    );
    await updateStudy(
      db,
      STUDY,
      {
        name: { en: "GrippeNet Switzerland 2025/26" },
        description: { en: "Weekly influenza-like illness surveillance" },
      },
      "seed",
      { clock: systemClock },
    );
    await t.database.sql`
      update participants set
        participant_id = substr(md5('grippenet' || participant_id), 1, 24),
        study_status = case when participant_id like '%7' then 'exited' else 'active' end,
        flags = jsonb_build_object(
          'consent', 'yes',
          'region', (array['Zürich', 'Bern', 'Vaud', 'Ticino', 'Basel-Stadt'])[1 + (right(participant_id, 1)::int % 5)],
          'ageGroup', (array['18-34', '35-49', '50-64', '65+'])[1 + (right(participant_id, 1)::int % 4)]),
        assigned_surveys = jsonb_build_array(jsonb_build_object(
          'surveyKey', 'weekly', 'category', 'normal', 'validFrom', entered_at, 'validUntil', 0))
      where study_key = ${STUDY}`;
    await t.database.sql`
      update survey_responses set participant_id = substr(md5('grippenet' || participant_id), 1, 24)
      where study_key = ${STUDY}`;
    await t.database.sql`
      update participants p set last_submissions = jsonb_build_object('weekly', r.last), modified_at = r.last
      from (select participant_id, max(submitted_at) as last from survey_responses
            where study_key = ${STUDY} group by participant_id) r
      where p.study_key = ${STUDY} and p.participant_id = r.participant_id`;
    const [first] = await t.database.sql<{ participant_id: string }[]>`
      select participant_id from participants where study_key = ${STUDY} and study_status = 'active'
      order by participant_id limit 1`;
    someParticipant = first!.participant_id;
    const ofParticipant = await t.database.sql<{ id: string; submitted_at: number }[]>`
      select id, submitted_at from survey_responses where study_key = ${STUDY} and participant_id = ${someParticipant}
      order by submitted_at`;
    await db.insert(reports).values(
      ofParticipant.slice(0, 3).map((response, index) => ({
        studyKey: STUDY,
        participantId: someParticipant,
        key: "symptomsReport",
        responseId: response.id,
        eventType: "SUBMIT",
        timestamp: response.submitted_at,
        data: [
          { key: "fever", value: index === 1 ? "yes" : "no" },
          { key: "symptomStart", value: String(response.submitted_at - 86_400), dtype: "date" },
        ],
      })),
    );
    await recordRuleFailures(
      db,
      [
        {
          studyKey: STUDY,
          participantId: someParticipant,
          eventType: "SUBMIT",
          eventKey: "weekly",
          rulesVersion: 1,
          ruleIndex: 1,
          path: "rules[1].data[1].exp",
          message: 'no response item "weekly.Q11" in the response',
          outcome: "rule-skipped",
        },
      ],
      new Date(),
    );

    await createStudy(db, { key: EMPTY });
    await updateStudy(db, EMPTY, { name: { en: "Sleep Diary Pilot" } }, "seed", { clock: systemClock });

    // Text a participant or a rule controls, in a study of its own so the screenshots stay real.
    await createStudy(db, { key: MARKUP });
    await db.insert(participants).values({
      studyKey: MARKUP,
      participantId: `p-${XSS}`,
      studyStatus: "active",
      enteredAt: 1_767_225_600,
      modifiedAt: 1_767_225_600,
      flags: { note: XSS, [XSS]: "x" },
    });
    await db.insert(reports).values({
      studyKey: MARKUP,
      participantId: `p-${XSS}`,
      key: XSS,
      eventType: "CUSTOM",
      timestamp: 1_767_225_600,
      data: [{ key: "comment", value: XSS }],
    });

    // The markup study is granted in its own test, so the studies page shows only real-looking ones.
    for (const key of [STUDY, EMPTY]) await grantPermission(db, "dr-meier", key, "*");
    const secret = t.config.MANAGEMENT_JWT_SECRET;
    researcherToken = await mintManagementToken({ now: Date.now(), subject: "dr-meier", isAdmin: false, secret });
    strangerToken = await mintManagementToken({ now: Date.now(), subject: "visitor", isAdmin: false, secret });

    worker = startWorkerBesideApi(t, resultDir, { batchSize: 50, chunkSize: 60 });
    // A daily export of the weekly survey, for the first week's day (the seed's responses of that
    // day), run by the worker like the nightly job's.
    await setDailyExportConfig(
      db,
      STUDY,
      {
        surveyKeys: ["weekly"],
        options: {
          format: "wide",
          questionOptionSep: "-",
          shortKeys: false,
          extraContextColumns: [],
          includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
          gzip: false,
        },
        enabled: true,
      },
      "seed",
      { clock: systemClock },
    );
    const [daily] = await startDailyExports(db, {
      clock: systemClock,
      now: (FIRST_DAY + 86_400) * 1000,
      queue: (task) => queueTask(t.deps.taskQueue, task),
    });
    expect(daily?.task).toBeDefined();
    for (let deadline = Date.now() + 20_000; ;) {
      const [row] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, daily!.task!.id));
      if (row?.status === "completed") break;
      if (Date.now() > deadline) throw new Error(`the daily export did not complete: ${row?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    ui = await startConsoleBrowser(t.app.fetch, { acceptDownloads: true, timeoutMs: 15_000 });
    ({ base, page } = ui);
    const [row] = await db.select({ key: studies.key }).from(studies).where(eq(studies.key, STUDY));
    expect(row?.key).toBe(STUDY);
  });

  afterAll(async () => {
    await ui?.close();
    await worker?.stop();
    await t?.close();
  });

  it("lists a study's participants, filters them and pages through them", async () => {
    await signIn(researcherToken);
    // The studies page the README shows: these two realistic studies, never the markup fixture.
    const card = page.locator(`.study-card[data-study-key="${STUDY}"]`);
    await card.getByText("active 11").waitFor();
    expect(await page.locator(".study-card").count()).toBe(2);
    await documented("studies");

    await open(`#/studies/${STUDY}/participants`);
    expect(await page.locator("#page-title").innerText()).toBe(`Participants of ${STUDY}`);
    const rows = page.locator("table.participants tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(12);
    expect(await page.locator(".page-text").innerText()).toBe("Page 1 of 1 · 12 participants");
    expect(await rows.first().innerText()).toMatch(/consent = yes/);
    await documented("participants");

    await page.locator("#filter-status").selectOption("exited");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator(".page-text", { hasText: "participants" }).waitFor();
    await expect.poll(() => rows.count()).toBeLessThan(12);
    for (const status of await page.locator("table.participants tbody .badge").allInnerTexts())
      expect(status).toBe("exited");

    await page.locator("#filter-status").selectOption("");
    await page.locator("#filter-flag-key").fill("region");
    await page.locator("#filter-flag-value").fill("Zürich");
    await page.locator("#filter-limit").selectOption("10");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(async () => (await rows.allInnerTexts()).every((text) => text.includes("Zürich"))).toBe(true);

    await page.locator("#filter-flag-key").fill("");
    await page.locator("#filter-flag-value").fill("");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Page 1 of 2 · 12 participants").waitFor();
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText("Page 2 of 2 · 12 participants").waitFor();
    expect(await rows.count()).toBe(2);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);

    await page.locator("#filter-id").fill(someParticipant.slice(0, 6));
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator(`tr[data-participant-id="${someParticipant}"]`).waitFor();
  });

  it("shows one participant: state, surveys, submissions, responses, reports and rule failures", async () => {
    await page.locator(`tr[data-participant-id="${someParticipant}"] a`).click();
    await page.locator(".participant-state").waitFor();
    expect(await page.locator("#page-title").innerText()).toBe(`Participant ${someParticipant}`);
    const state = await page.locator(".participant-state").innerText();
    expect(state).toMatch(/Status\s+active/);
    expect(state).toContain("consent = yes");
    expect(state).toContain("weekly");
    await page.locator("table.responses tbody tr").first().waitFor();
    expect(await page.locator("table.responses tbody tr").count()).toBe(10);
    await page.locator("table.reports tbody tr").first().waitFor();
    expect(await page.locator("table.reports tbody tr").count()).toBe(3);
    expect(await page.locator("table.reports").innerText()).toContain("fever = yes");
    await page.getByText('no response item "weekly.Q11" in the response').waitFor();
    await documented("participant");
  });

  it("starts a responses export, follows it and downloads the file", async () => {
    await open(`#/studies/${STUDY}/exports`);
    await page.locator("#export-survey").fill("weekly");
    await page.locator("#export-format").selectOption("wide");
    await page.getByRole("button", { name: "Start the export" }).click();
    const run = page.locator(".export-progress");
    await run.waitFor();
    await page.locator('.export-progress[data-status="completed"]').waitFor({ timeout: 30_000 });
    expect(await run.locator(".progress-text").innerText()).toContain(`${RESPONSES} of ${RESPONSES} responses (100 %)`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      run.getByRole("button", { name: "Download the file" }).click(),
    ]);
    const file = await download.path();
    const lines = csvRows(await readFile(file, "utf8"));
    expect(lines[0]).toMatch(/^ID,/);
    expect(lines).toHaveLength(RESPONSES + 1);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);

    // Every export is stored gzip, a part per batch of 50, and sent with Content-Encoding: gzip:
    // the browser unpacked one gzip member of several parts into every row above (a member per
    // part, as gzip files were stored before, gave it the first part's rows only).
    const [stored] = await t.database.sql<{ parts: number; encoding: string; framing: string }[]>`
      select count(p.*)::int as parts, f.content_encoding as encoding, f.gzip_framing as framing
      from stored_files f join stored_file_parts p on p.file_id = f.id
      where f.study_key = ${STUDY} and f.name = ${download.suggestedFilename()}
      group by f.id`;
    expect(stored).toEqual({ parts: expect.any(Number), encoding: "gzip", framing: "stream" });
    expect(stored!.parts).toBeGreaterThan(3);

    // The export shows up among the recent ones, with its file.
    await page.locator("table.exports tbody tr").first().waitFor();
    expect(await page.locator("table.exports tbody tr").first().innerText()).toMatch(/responses\s+completed/);
    await documented("exports");

    // The daily export of the first week's day, downloaded by its name.
    const dailyItem = page.locator(".daily-exports li").first();
    await dailyItem.waitFor();
    const dailyName = await dailyItem.locator("code").innerText();
    expect(dailyName).toContain("weekly");
    const [dailyFile] = await Promise.all([
      page.waitForEvent("download"),
      dailyItem.getByRole("button", { name: "Download" }).click(),
    ]);
    expect(csvRows(await readFile(await dailyFile.path(), "utf8")).length).toBeGreaterThan(1);

    // The codebook of the survey.
    await page.locator("#codebook-survey").fill("weekly");
    const [codebook] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download the codebook" }).click(),
    ]);
    expect(codebook.suggestedFilename()).toBe(`survey-infos_${STUDY}_weekly.csv`);
    expect((await readFile(await codebook.path(), "utf8")).split("\n")[0]).toContain("surveyKey");
  });

  it("says plainly when a study has nothing, and when an export cannot start", async () => {
    await open(`#/studies/${EMPTY}/participants`);
    await page.getByText("The study has no participants yet.").waitFor();
    await open(`#/studies/${EMPTY}/exports`);
    await page.getByText("No exports yet.").waitFor();
    await page.getByText("No daily exports yet.").waitFor();
    await page.getByText("No daily exports are set up.").waitFor();
    await page.locator(".daily-surveys").getByText("The study has no surveys yet.").waitFor();
    await page.locator("#export-survey").fill("weekly");
    await page.getByRole("button", { name: "Start the export" }).click();
    await page.locator(".export-form .notice-error").waitFor();
    expect(await page.locator(".export-form .notice-error").innerText()).toMatch(/weekly/);
  });

  it("renders participant-controlled text as text", async () => {
    await grantPermission(t.database.db, "dr-meier", MARKUP, "*");
    await open(`#/studies/${MARKUP}/participants`);
    const row = page.locator("table.participants tbody tr").first();
    await row.waitFor();
    expect(await row.innerText()).toContain(XSS);
    await row.locator("a").click();
    await page.locator(".participant-state").waitFor();
    await page.locator("table.reports tbody tr").first().waitFor();
    expect(await page.locator("table.reports").innerText()).toContain(XSS);
    expect(await page.locator("#page-title").innerText()).toBe(`Participant p-${XSS}`);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.evaluate("'__xss' in window")).toBe(false);
    expect(ui.policyViolations).toEqual([]);
  });

  it("shows a missing right readably", async () => {
    await signIn(strangerToken);
    await open(`#/studies/${STUDY}/participants`);
    const error = page.locator(".notice-error");
    await error.waitFor();
    expect(await error.innerText()).toMatch(/^The participants could not be read: .+/);
    expect(await error.innerText()).not.toMatch(/\{|"error"/);
    await open(`#/studies/${STUDY}/participants/${someParticipant}`);
    await page
      .getByText(/^not shown: /)
      .first()
      .waitFor();
    await open(`#/studies/${STUDY}/exports`);
    await page
      .getByText(/^not shown: /)
      .first()
      .waitFor();
    await page.locator("#export-survey").fill("weekly");
    await page.getByRole("button", { name: "Start the export" }).click();
    await page.locator(".export-form .notice-error").waitFor();
    expect(await page.locator(".export-form .notice-error").innerText()).toMatch(/^The export did not start: /);
    expect(await page.locator(".export-progress").count()).toBe(0);
    await page.getByText("Daily export settings").first().waitFor();
    expect(await page.locator(".daily-settings").innerText()).toMatch(/^not shown: /);
  });

  it("sets up a study's daily exports, shows them as stored after a reload, and tells a refused save", async () => {
    const db = t.database.db;
    // From nothing: the seed's settings are gone (the daily export above has run).
    await db.delete(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY));
    await signIn(researcherToken);
    await open(`#/studies/${STUDY}/exports`);
    const settings = page.locator(".daily-settings");
    await settings.getByText("No daily exports are set up.").waitFor();
    const weekly = settings.getByRole("checkbox", { name: "weekly", exact: true });
    expect(await weekly.isChecked()).toBe(false);
    await weekly.check();
    await page.locator("#daily-format").selectOption("long");
    await page.locator("#daily-gzip").check();
    await page.getByRole("button", { name: "Save the daily export settings" }).click();
    await settings.getByText("The daily export settings are saved.").waitFor();
    expect(await settings.locator(".daily-summary").innerText()).toMatch(/on: weekly every day/);

    await page.reload();
    await settings.locator(".daily-summary dl").waitFor();
    const summary = await settings.locator(".daily-summary").innerText();
    expect(summary).toMatch(/on: weekly every day/);
    expect(summary).toMatch(/one row per answer \(long\), gzip-compressed/);
    expect(summary).toMatch(/by dr-meier/);
    expect(await weekly.isChecked()).toBe(true);
    expect(await page.locator("#daily-format").inputValue()).toBe("long");
    expect(await page.locator("#daily-gzip").isChecked()).toBe(true);
    expect(await page.locator("#daily-enabled").isChecked()).toBe(true);
    const [row] = await db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY));
    expect(row).toMatchObject({ surveyKeys: ["weekly"], enabled: true, updatedBy: "dr-meier" });
    expect(row?.options).toMatchObject({ format: "long", gzip: true, questionOptionSep: "-", shortKeys: false });

    // A researcher whose get-responses right is withdrawn while the page is open.
    await grantPermission(db, "dr-roth", STUDY, "get-responses");
    await grantPermission(db, "dr-roth", STUDY, "manage-surveys");
    const secret = t.config.MANAGEMENT_JWT_SECRET;
    await signIn(await mintManagementToken({ now: Date.now(), subject: "dr-roth", isAdmin: false, secret }));
    await open(`#/studies/${STUDY}/exports`);
    await settings.locator(".daily-summary dl").waitFor();
    await db
      .delete(permissions)
      .where(
        and(
          eq(permissions.subjectId, "dr-roth"),
          eq(permissions.studyKey, STUDY),
          eq(permissions.action, "get-responses"),
        ),
      );
    await page.locator("#daily-enabled").uncheck();
    await page.getByRole("button", { name: "Save the daily export settings" }).click();
    const refused = settings.locator(".notice-error");
    await refused.waitFor();
    expect(await refused.innerText()).toMatch(/^The daily export settings were not saved: .*get-responses/);
    expect(await refused.innerText()).not.toMatch(/\{|"error"/);
    const [after] = await db.select().from(dailyExportConfigs).where(eq(dailyExportConfigs.studyKey, STUDY));
    expect(after?.enabled).toBe(true);
    expect(after?.updatedBy).toBe("dr-meier");
    expect(ui.policyViolations).toEqual([]);
  });
});
