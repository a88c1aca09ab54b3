import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, tasks } from "@studyflow/db";
import { mintManagementToken } from "@studyflow/domain/access";
import { enterStudy } from "@studyflow/domain/events";
import { systemClock } from "@studyflow/domain/foundation";
import { updateStudy } from "@studyflow/domain/study-config";
import {
  addSyntheticParticipants,
  createStudy,
  createUserWithProfiles,
  grantPermission,
  setStudyRules,
} from "@studyflow/domain/study-setup";
import { startDueTimerTicks } from "@studyflow/domain/timer";
import { taskJobOptions, taskJobId, taskJobName } from "@studyflow/queue";
import { STRONG_PASSWORD, exp, onEvent } from "@studyflow/testkit";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { call, onCustom, startWorkerBesideApi, str } from "@studyflow/worker/testing";
import { screenshot, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The console in a real browser (Debian's Chromium) against the real API on a port and an
 * in-process worker: sign-in, the studies, the rules editor, dry and real runs over 2,000
 * participants followed live, cancel, the task list, a rule failure, a token without rights, and
 * user-controlled text (study names and keys, rule strings) that must stay text.
 */

const STUDY = "flu-cohort";
/** A key the API accepts (no space, '/', '?' or '#') that would be markup if anything parsed it. */
const MARKUP_KEY = 'x"><b>xss<img>';
const XSS = '<img src=x onerror="window.__xss=1">';
/** Synthetic participants and one who enters through the ENTER event. */
const PARTICIPANTS = 2_000;

/** The study's rules: a TIMER rule (the study gets ticks) and an ENTER rule whose second action always fails. */
const studyRules = [
  onEvent("TIMER", call("UPDATE_FLAG", str("ticked"), str("yes"))),
  onEvent(
    "ENTER",
    call("UPDATE_FLAG", str("note"), str(XSS)),
    call("UPDATE_FLAG", str("age"), exp(call("getResponseValueAsStr", str("intake.Q2"), str("rg.num")))),
  ),
];
const runRules = [onCustom(call("UPDATE_FLAG", str("reviewed"), str("yes")))];
const failingRules = [
  call("UPDATE_FLAG", str("age"), exp(call("getResponseValueAsStr", str("intake.Q2"), str("rg.num")))),
];

describe("the console in a browser", () => {
  let t: TestApp;
  let ui: ConsoleBrowser;
  let base: string;
  let worker: ReturnType<typeof startWorkerBesideApi>;
  let page: Page;
  let researcherToken: string;
  let strangerToken: string;
  const dialogs: string[] = [];

  const flags = async (flag: string) => {
    const [row] = await t.database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(participants)
      .where(and(eq(participants.studyKey, STUDY), sql`${participants.flags} ->> ${flag} is not null`));
    return row?.n ?? 0;
  };
  const open = async (hash: string) => {
    await page.goto(`${base}/console${hash}`);
    await page.locator("#page-title").waitFor();
  };
  const text = (selector: string) => page.locator(selector).innerText();

  beforeAll(async () => {
    const resultDir = await mkdtemp(path.join(tmpdir(), "sf-console-"));
    t = await createTestApp({ env: { RESULT_DIR: resultDir } });
    const db = t.database.db;
    await createStudy(db, { key: STUDY });
    await updateStudy(db, STUDY, { name: { en: `Flu cohort ${XSS}` } }, "seed", { clock: systemClock });
    await setStudyRules(db, STUDY, studyRules, "seed");
    await addSyntheticParticipants(db, { studyKey: STUDY, count: PARTICIPANTS - 1, enteredAt: 1_700_000_000 });
    await createStudy(db, { key: MARKUP_KEY });
    await updateStudy(db, MARKUP_KEY, { name: { en: XSS } }, "seed", { clock: systemClock });
    await grantPermission(db, "ada", STUDY, "*");
    await grantPermission(db, "ada", MARKUP_KEY, "*");
    const secret = t.config.MANAGEMENT_JWT_SECRET;
    researcherToken = await mintManagementToken({ now: Date.now(), subject: "ada", isAdmin: false, secret });
    strangerToken = await mintManagementToken({ now: Date.now(), subject: "stranger", isAdmin: false, secret });

    worker = startWorkerBesideApi(t, resultDir, { batchSize: 100, chunkSize: 600 });
    // One participant enters: the second ENTER action fails and is recorded as a rule failure.
    const user = await createUserWithProfiles(db, {
      now: new Date(),
      email: "pat@example.org",
      password: STRONG_PASSWORD,
      profiles: ["Pat"],
    });
    const { warnings } = await enterStudy(
      db,
      { studyKey: STUDY, userId: user.user.id, profile: { id: user.profiles[0]!.id, mainProfile: true } },
      { clock: Date.now },
    );
    expect(warnings).toHaveLength(1);
    // The current slot's timer tick, run by the worker to the end before the runs start.
    const ticks = await startDueTimerTicks(db, {
      now: Date.now(),
      defaultIntervalSeconds: 3_600,
      enqueue: async (taskId) => {
        await t.deps.taskQueue.add(
          taskJobName("timer"),
          { kind: "task", taskId },
          { ...taskJobOptions, jobId: taskJobId(taskId) },
        );
      },
    });
    expect(ticks.map((tick) => tick.studyKey)).toEqual([STUDY]);
    for (let deadline = Date.now() + 20_000; ;) {
      const [tick] = await db.select().from(tasks).where(eq(tasks.kind, "timer"));
      if (tick?.status === "completed") break;
      if (Date.now() > deadline) throw new Error(`the timer tick did not complete: ${tick?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    ui = await startConsoleBrowser(t.app.fetch);
    ({ base, page } = ui);
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });

  afterAll(async () => {
    await ui?.close();
    await worker?.stop();
    await t?.close();
  });

  it("signs in with the keyboard and lists the studies the token may see", async () => {
    await open("");
    expect(await text("#page-title")).toBe("Sign in");
    // Where a credential comes from (the CLI's commands); without a provider configured (CONSOLE_OIDC_*)
    // no "Sign in with …" button, and a note saying what it needs (oidc-sign-in.test.ts has one).
    const sources = await text("#credential-sources");
    expect(sources).toContain("npm run -s cli -- token:management --subject <name>");
    expect(sources).toContain("node dist/cli/main.js token:management");
    expect(sources).toContain("service-key:create --subject <name>");
    expect(sources).toContain(
      "Signing in with your organisation's account (its OpenID Connect provider) needs the provider set up where studyflow runs (the CONSOLE_OIDC_* settings).",
    );
    expect(await page.locator("#sign-in-provider").count()).toBe(0);
    await screenshot(page, "sign-in");
    // The token field has the focus; Enter submits.
    await page.keyboard.type(researcherToken);
    await page.keyboard.press("Enter");
    await page.locator(".study-card").first().waitFor();
    expect(await page.locator(".study-card").count()).toBe(2);
    expect(await text("#who")).toContain("ada");

    const card = page.locator(`.study-card[data-study-key="${STUDY}"]`);
    await card.locator(".recent-failures li").first().waitFor();
    await card.getByText("active 2,000").waitFor();
    const shown = await card.innerText();
    expect(shown).toContain(`Flu cohort ${XSS}`);
    expect(shown).toContain("version 1");
    expect(shown).toMatch(/State\s+running/);
    expect(shown).toMatch(/Last tick\s+.+\(completed\)/);
    expect(shown).toContain("rules[1].data[2].exp.data[1].exp");
    await screenshot(page, "studies");

    // The credential is in this tab's session storage only.
    const stored = await page.evaluate(
      "({ session: Object.keys(sessionStorage), local: localStorage.length, cookies: document.cookie })",
    );
    expect(stored).toEqual({ session: ["studyflow.console.credential"], local: 0, cookies: "" });
  });

  it("shows study names and keys that look like markup as text", async () => {
    const card = page.locator(".study-card").filter({ has: page.locator("code", { hasText: MARKUP_KEY }) });
    await card.waitFor();
    expect(await card.locator("h2").innerText()).toContain(XSS);
    // Nothing injected: no image, no bold element anywhere, and no handler ran.
    expect(await page.locator("img, b").count()).toBe(0);
    expect(await page.evaluate("'__xss' in window")).toBe(false);
    await card.getByRole("link", { name: "Tasks" }).click();
    await page.locator("table.tasks caption").waitFor();
    expect(await text("#page-title")).toBe(`Tasks of ${MARKUP_KEY}`);
    await page.getByText("No tasks you may see yet.").waitFor();
  });

  it("validates the rules as they are typed and marks the JSON path of each problem", async () => {
    await open(`#/studies/${STUDY}/run`);
    const editor = page.locator("#rules-text");
    const status = page.locator("#rules-status");
    await page.getByText("Valid: 1 rule.").waitFor();

    const broken = JSON.stringify(
      [
        {
          name: "UPDATE_FLAG",
          data: [
            { dtype: "str", str: XSS },
            { dtype: "exp", exp: { name: XSS, data: [] } },
          ],
        },
        { name: "REMOVE_FLAG", data: [] },
      ],
      null,
      2,
    );
    await editor.fill(broken);
    await page.getByText("2 problems.").waitFor();
    const issues = page.locator(".issues li");
    expect(await issues.allInnerTexts()).toEqual([
      `rules[0].data[1].exp.name unknown expression ${JSON.stringify(XSS)}`,
      "rules[1].data REMOVE_FLAG takes exactly 1 argument, got 0",
    ]);
    // Each problem is marked where its path points in the text.
    const marks = await page.locator(".editor-backdrop mark").allInnerTexts();
    expect(marks).toEqual([JSON.stringify(XSS), "[]"]);
    expect(await page.getByRole("button", { name: "Start run" }).isDisabled()).toBe(true);
    expect(await page.locator("img").count()).toBe(0);
    // Choosing a problem selects its value in the editor.
    await issues.nth(0).getByRole("button").click();
    const selected = await page.evaluate(
      "(({ value, selectionStart, selectionEnd }) => value.slice(selectionStart, selectionEnd))(document.getElementById('rules-text'))",
    );
    expect(selected).toBe(JSON.stringify(XSS));
    await screenshot(page, "rules-editor");

    // As you type: a syntax error at once, then valid again.
    await editor.fill('[\n  {"name": "UPDATE_FLAG", "data": [');
    expect(await status.innerText()).toBe("The text is not valid JSON.");
    expect(await issues.allInnerTexts()).toEqual(["line 2, column 36 expected a value, found the end of the text"]);
    await editor.press("End");
    await editor.pressSequentially('{"dtype":"str","str":"a"},{"dtype":"str","str":"b"}]}]');
    await page.getByText("Valid: 1 rule.").waitFor();
    expect(await editor.getAttribute("aria-invalid")).toBe("false");
  });

  it("runs a dry run and a real run over 2,000 participants, the progress bar reaching 100 %", async () => {
    await open(`#/studies/${STUDY}/run`);
    await page.locator("#rules-text").fill(JSON.stringify(runRules, null, 2));
    await page.getByText("Valid: 1 rule.").waitFor();
    expect(await page.locator("#dry-run").isChecked()).toBe(true);
    const start = page.getByRole("button", { name: "Start run" });

    /** Starts a run and waits for its view to show the completed result; returns the view. */
    const runToEnd = async () => {
      const before = await page.locator(".task-progress").count();
      await start.click();
      await page.locator(".task-progress").nth(before).waitFor();
      const view = page.locator(".task-progress").first();
      await view.locator(".task-result table.per-rule").waitFor({ timeout: 30_000 });
      return view;
    };

    // Every value the newest progress bar takes, as the event stream moves it. (Page code is
    // given as text: this program is type-checked against Node's declarations, not the DOM's.)
    await page.evaluate(`{
      const seen = (window.progressSeen = []);
      new MutationObserver(() => {
        const bar = document.querySelector(".task-progress progress");
        if (bar && bar.value !== seen.at(-1)) seen.push(bar.value);
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["value"] });
    }`);
    const progressSeen = () => page.evaluate<number[]>("window.progressSeen.splice(0)");
    /** The value and maximum of a view's progress bar (its value attribute follows every update). */
    const bar = async (view: Locator) => {
      const progress = view.locator("progress");
      return [Number(await progress.getAttribute("value")), Number(await progress.getAttribute("max"))];
    };

    const dry = await runToEnd();
    expect(await dry.getAttribute("data-status")).toBe("completed");
    expect(await bar(dry)).toEqual([PARTICIPANTS, PARTICIPANTS]);
    expect(await dry.locator(".progress-text").innerText()).toBe("2,000 of 2,000 participants (100 %) · completed");
    expect(await dry.locator(".task-result").innerText()).toContain("Result of the dry run (nothing was written)");
    expect(await dry.locator("table.per-rule tbody").innerText()).toMatch(/0 · IFTHEN\s+2,000/);
    expect(await flags("reviewed")).toBe(0);
    const seen = await progressSeen();
    expect(seen.at(-1)).toBe(PARTICIPANTS);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);

    await page.locator("#dry-run").uncheck();
    const real = await runToEnd();
    expect(await bar(real)).toEqual([PARTICIPANTS, PARTICIPANTS]);
    expect(await real.locator(".progress-text").innerText()).toContain("(100 %)");
    expect(await real.locator(".task-result h3").innerText()).toBe("Result");
    expect(await real.locator("table.per-rule tbody").innerText()).toMatch(/2,000/);
    const download = real.getByRole("link", { name: "Download the result file (JSON)" });
    expect(await download.getAttribute("download")).toMatch(/^task-[0-9a-f-]{36}\.json$/);
    expect(await flags("reviewed")).toBe(PARTICIPANTS);
    await screenshot(page, "run-actions");

    // A rule that fails on every participant: the result lists the first errors.
    await page.locator("#rules-text").fill(JSON.stringify(failingRules));
    await page.getByText("Valid: 1 rule.").waitFor();
    await page.locator("#dry-run").check();
    const failing = await runToEnd();
    const result = await failing.locator(".task-result").innerText();
    expect(result).toMatch(/Errors\s+2,000/);
    expect(result).toContain("First errors (10 of 2,000)");
    expect(await failing.locator(".task-errors li").count()).toBe(10);
    expect(await failing.locator(".task-errors li").first().innerText()).toMatch(/^\S+: rules\[0\]\.data\[1\]\.exp: /);
  });

  it("shows the rate and the time left while a task runs", async () => {
    // The progress line's arithmetic, run in the page on the module the console loads.
    const lines = await page.evaluate(`import("/console/assets/task-progress.js").then(({ describeProgress }) => [
      describeProgress({ status: "in_progress", targetCount: 2000, processedCount: 500 }, [
        { at: 10000, processed: 0 },
        { at: 10400, processed: 200 },
        { at: 11000, processed: 500 },
      ]).text,
      describeProgress({ status: "in_progress", targetCount: 2000, processedCount: 100 }, [{ at: 0, processed: 100 }]).text,
      describeProgress({ status: "queued", targetCount: 0, processedCount: 0 }, []).text,
      describeProgress({ status: "completed", targetCount: 0, processedCount: 0 }, []).text,
      describeProgress({ status: "canceled", targetCount: 2000, processedCount: 1999 }, [
        { at: 0, processed: 0 },
        { at: 1000, processed: 1999 },
      ]).text,
    ])`);
    expect(lines).toEqual([
      "500 of 2,000 participants (25 %) · 500 per second · about 3.0 s left",
      "100 of 2,000 participants (5 %) · running",
      "0 of 0 participants (0 %) · queued",
      "0 of 0 participants (100 %) · completed",
      "1,999 of 2,000 participants (99 %) · canceled",
    ]);
  });

  it("cancels a run", async () => {
    // The queue hands out no job meanwhile (a paused queue, unlike a paused worker, holds back a
    // job added while a worker waits), so the run is surely still queued when it is canceled.
    await t.deps.taskQueue.pause();
    try {
      await open(`#/studies/${STUDY}/run`);
      await page.locator("#rules-text").fill(JSON.stringify(runRules));
      await page.getByText("Valid: 1 rule.").waitFor();
      await page.locator("#dry-run").uncheck();
      await page.getByRole("button", { name: "Start run" }).click();
      const view = page.locator(".task-progress").first();
      await view.locator(".progress-text", { hasText: "queued" }).waitFor();
      await view.getByRole("button", { name: "Cancel task" }).click();
      await page.locator('.task-progress[data-status="canceled"]').waitFor();
      expect(await view.locator(".progress-text").innerText()).toBe("0 of 2,000 participants (0 %) · canceled");
      expect(await view.innerText()).toContain("canceled by ada");
      expect(await view.getByRole("button", { name: "Cancel task" }).isHidden()).toBe(true);
      await screenshot(page, "canceled");
    } finally {
      await t.deps.taskQueue.resume();
    }
  });

  it("lists the study's tasks, run-actions and its timer tick, and opens one", async () => {
    await open(`#/studies/${STUDY}/tasks`);
    await page.locator("table.tasks tbody tr").nth(4).waitFor();
    const rows = await page.locator("table.tasks tbody tr").allInnerTexts();
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatch(/run-actions\s+canceled\s+ada/);
    expect(rows[1]).toMatch(/run-actions \(dry run\)\s+completed\s+ada/);
    expect(rows[2]).toMatch(/run-actions\s+completed\s+ada\s+.+\s+2,000 \/ 2,000/);
    expect(rows[3]).toMatch(/run-actions \(dry run\)\s+completed\s+ada/);
    expect(rows[4]).toMatch(/timer tick \(rules v1\)\s+completed\s+study-timer/);
    await screenshot(page, "tasks");

    await page.locator("table.tasks tbody tr").nth(2).getByRole("link").click();
    const view = page.locator(".task-progress");
    await view.locator(".task-result table.per-rule").waitFor();
    expect(await view.getAttribute("data-status")).toBe("completed");
    expect(await text("#page-title")).toBe(`Task of ${STUDY}`);
    await screenshot(page, "task");
  });

  it("filters the rule failures and opens one, marking the failing expression in its rule", async () => {
    await open(`#/studies/${STUDY}/failures`);
    const rows = page.locator("table.failures tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain("rules[1].data[2].exp.data[1].exp");

    await page.getByLabel("Rule (index)").fill("0");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("No rule failures match.").waitFor();
    await page.getByLabel("Rule (index)").fill("1");
    await page.getByLabel("Event").selectOption("ENTER");
    await page.getByRole("button", { name: "Apply" }).click();
    await rows.first().waitFor();

    await rows.first().getByRole("button").click();
    const detail = page.locator("#failure-detail");
    await detail.locator(".rule-source mark").waitFor();
    const shown = await detail.innerText();
    expect(shown).toMatch(/Event\s+ENTER/);
    expect(shown).toMatch(/Failing expression\s+rules\[1\]\.data\[2\]\.exp\.data\[1\]\.exp/);
    const marked = await detail.locator(".rule-source mark").innerText();
    expect(JSON.parse(marked)).toEqual({
      name: "getResponseValueAsStr",
      data: [
        { dtype: "str", str: "intake.Q2" },
        { dtype: "str", str: "rg.num" },
      ],
    });
    // The rule's strings are shown as they are.
    expect(await detail.locator(".rule-source").innerText()).toContain(JSON.stringify(XSS).slice(1, -1));
    expect(await page.locator("img").count()).toBe(0);
    await screenshot(page, "rule-failure");
  });

  it("shows nothing to a token without permissions", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("#credential").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.locator("#credential").fill("not-a-token");
    await page.keyboard.press("Enter");
    await page.getByText("Not signed in: malformed token").waitFor();

    // Signed in again, the console stays on the page it was at: the rule failures.
    await page.locator("#credential").fill(strangerToken);
    await page.keyboard.press("Enter");
    await page.getByText(`missing permission "read-rule-failures" for study "${STUDY}"`).waitFor();
    expect(await page.locator("table.failures tbody tr").count()).toBe(0);

    await open("#/studies");
    await page.getByText("stranger may see no studies: there is nothing to show.").waitFor();
    expect(await page.locator(".study-card").count()).toBe(0);
    await screenshot(page, "no-permission");
    await open(`#/studies/${STUDY}/tasks`);
    await page.getByText(`missing permission "run-study-action" for study "${STUDY}"`).waitFor();
    expect(await page.locator("table.tasks tbody tr").count()).toBe(0);
    await open(`#/studies/${STUDY}/run`);
    await page.getByText(/The rules could not be checked: missing permission/).waitFor();
    expect(await page.getByRole("button", { name: "Start run" }).isDisabled()).toBe(true);
  });

  it("ran under the content security policy without a violation, a dialog or an injected script", () => {
    expect(ui.policyViolations).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
