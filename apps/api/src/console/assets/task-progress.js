// @ts-check
// A task followed live: the progress bar fed by the task's event stream, the rate and the time
// left, cancel, and once it has completed its result (per-rule change counts, the first errors,
// the result file).
import { ApiError, call, get, readTaskEvents, taskPath } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { count, duration, instant, percent } from "./format.js";
import { studyLink } from "./study-links.js";
import { TERMINAL_STATUSES, taskStatusWord } from "./task-status.js";

/**
 * @typedef {import("./api-types.js").Task} Task
 * @typedef {import("./api-types.js").ResultDocument} ResultDocument
 */

/** The rate is measured over the last few seconds, so a slow start does not skew the time left. */
const RATE_WINDOW_MS = 5_000;
/** The server ends a stream after 30 minutes; the console reconnects after this pause. */
const RECONNECT_AFTER_MS = 1_000;
/** The first errors of the result file that the page lists (the file holds more). */
const ERRORS_SHOWN = 10;

/**
 * A task's own view says why it was skipped (a timer tick is skipped while another task of the
 * study runs); lists say only "skipped".
 * @param {string} status
 */
const statusText = (status) =>
  status === "skipped" ? "skipped (another task of the study was running)" : taskStatusWord(status);

/**
 * Each kind of task by the name a researcher knows it by. An export counts the rows it writes
 * (responses, participants or reports), not the study's participants.
 * @type {Record<Task["kind"], { name: string, unit: string, heading: string }>}
 */
const KINDS = {
  "run-actions": { name: "run-actions", unit: "participants", heading: "Task" },
  timer: { name: "timer tick", unit: "participants", heading: "Timer tick" },
  "export-responses": { name: "responses export", unit: "rows", heading: "Responses export" },
  "export-participants": { name: "participants export", unit: "rows", heading: "Participants export" },
  "export-reports": { name: "reports export", unit: "rows", heading: "Reports export" },
};

/**
 * A kind this console does not know yet (a newer API) still reads as its own name.
 * @param {string} kind
 */
function kindOf(kind) {
  return KINDS[/** @type {Task["kind"]} */ (kind)] ?? { name: kind, unit: "participants", heading: "Task" };
}

/**
 * An export's file is downloaded from the exports page, which reads it through the data
 * exporter's routes; the run-actions result routes know only run-actions and timer results.
 * @param {string} kind
 */
export function isExportTask(kind) {
  return kind.startsWith("export-");
}

/**
 * The readable name of a task's kind ("responses export", "timer tick (rules v3)", "run-actions
 * (dry run)"), as the task list shows it.
 * @param {Pick<import("./api-types.js").TaskListItem, "kind" | "dryRun" | "tick">} task
 */
export function taskKindName(task) {
  if (task.kind === "timer") return `timer tick (rules v${task.tick?.rulesVersion ?? "?"})`;
  if (task.kind === "run-actions" && task.dryRun) return "run-actions (dry run)";
  return kindOf(task.kind).name;
}

/**
 * What a task's progress counts: "rows" for an export, "participants" otherwise.
 * @param {string} kind
 */
export function progressUnit(kind) {
  return kindOf(kind).unit;
}

/**
 * @param {{ studyKey: string, task: Task, ruleNames?: string[], headingLevel?: "h2" | "h3" }} options
 */
export function createTaskProgress({ studyKey, task, ruleNames = [], headingLevel = "h2" }) {
  const controller = new AbortController();
  const bar = h("progress", { id: `progress-${task.id}`, max: 1, value: 0 });
  const progressText = h("p", { className: "progress-text", role: "status" });
  const facts = h("div");
  const cancelButton = h("button", { type: "button", className: "danger" }, "Cancel task");
  const message = h("div", { "aria-live": "polite" });
  const result = h("div", { className: "task-result" });
  const element = h(
    "section",
    { className: "task-progress", "aria-labelledby": `task-heading-${task.id}`, "data-task-id": task.id },
    h(headingLevel, { id: `task-heading-${task.id}` }, `${kindOf(task.kind).heading} `, h("code", {}, task.id)),
    facts,
    h("label", { for: `progress-${task.id}` }, "Progress"),
    bar,
    progressText,
    h("div", { className: "actions" }, cancelButton),
    message,
    result,
  );

  const meter = progressMeter(bar);
  let current = task;
  let resultShown = false;
  /** @type {string | undefined} the result file, kept by the page for its download link */
  let fileUrl;

  /** @param {Task} next */
  const show = (next) => {
    current = next;
    element.dataset.status = next.status;
    const summary = meter(next, progressUnit(next.kind));
    const done = next.status === "completed";
    progressText.textContent = summary.text;

    replace(
      facts,
      details([
        ["Status", h("span", { className: `status status-${next.status}` }, statusText(next.status))],
        ["Started by", next.createdBy],
        ["Created", instant(next.createdAt)],
        ["Last change", instant(next.updatedAt)],
      ]),
    );
    cancelButton.hidden = TERMINAL_STATUSES.has(next.status);
    if (next.error) replace(message, notice(next.error, next.status === "failed" ? "error" : "note"));
    if (done && !resultShown) {
      resultShown = true;
      if (isExportTask(next.kind)) showExportFile();
      else void showResult();
    }
  };

  // An export's file can be large and is served by the data exporter's routes, which the exports
  // page already calls (with the file's name and type); this page points there.
  const showExportFile = () =>
    replace(
      result,
      h("p", {}, "The file is ready: download it on ", studyLink(studyKey, "exports", "the exports page"), "."),
    );

  const showResult = async () => {
    replace(result, notice("Reading the result…"));
    try {
      const document_ = /** @type {ResultDocument} */ (
        await get(taskPath(studyKey, current.id, "/result"), controller.signal)
      );
      renderResult(document_);
    } catch (error) {
      if (controller.signal.aborted) return;
      replace(result, notice(`The result could not be read: ${errorText(error)}`, "error"));
    }
  };

  /** @param {ResultDocument} document_ */
  const renderResult = (document_) => {
    const file = new Blob([`${JSON.stringify(document_, null, 2)}\n`], { type: "application/json" });
    fileUrl = URL.createObjectURL(file);
    const link = h(
      "a",
      { href: fileUrl, download: `task-${current.id}.json`, className: "download" },
      "Download the result file (JSON)",
    );
    const perRule = h(
      "table",
      { className: "per-rule" },
      h("caption", {}, "Participants changed per rule"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Rule"), h("th", { scope: "col" }, "Participants changed"))),
      h(
        "tbody",
        {},
        document_.participantStateChangedPerRule.map((changed, index) =>
          h(
            "tr",
            {},
            h("th", { scope: "row" }, `${index}`, ruleNames[index] ? ` · ${ruleNames[index]}` : ""),
            h("td", { className: "number" }, count(changed)),
          ),
        ),
      ),
    );
    const errors = document_.errors.slice(0, ERRORS_SHOWN);
    replace(
      result,
      h("h3", {}, document_.dryRun ? "Result of the dry run (nothing was written)" : "Result"),
      details([
        ["Participants", count(document_.participantCount)],
        ["Errors", count(document_.errorCount)],
        ["Duration", duration(document_.durationMs)],
      ]),
      perRule,
      errors.length > 0
        ? [
            h("h4", {}, `First errors (${count(errors.length)} of ${count(document_.errorCount)})`),
            h(
              "ul",
              { className: "task-errors" },
              errors.map((entry) => h("li", {}, h("code", {}, entry.participantId), ": ", entry.error)),
            ),
          ]
        : null,
      h("p", {}, link),
    );
  };

  const follow = async () => {
    while (!controller.signal.aborted && !TERMINAL_STATUSES.has(current.status)) {
      try {
        await readTaskEvents(
          taskPath(studyKey, current.id, "/events"),
          (next) => show(/** @type {Task} */ (next)),
          controller.signal,
        );
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof ApiError && error.status < 500) {
          replace(message, notice(`The task can no longer be followed: ${error.message}`, "error"));
          return;
        }
      }
      if (!TERMINAL_STATUSES.has(current.status))
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_AFTER_MS));
    }
  };

  cancelButton.addEventListener("click", () => {
    cancelButton.disabled = true;
    call("POST", taskPath(studyKey, current.id, "/cancel"), { signal: controller.signal })
      .then((answer) => show(/** @type {{ task: Task }} */ (answer).task))
      .catch((/** @type {unknown} */ error) => {
        if (!controller.signal.aborted) replace(message, notice(`Not canceled: ${errorText(error)}`, "error"));
      })
      .finally(() => {
        cancelButton.disabled = false;
      });
  });

  show(task);
  void follow();
  return {
    element,
    /** Ends the stream and the requests (the page is left). */
    stop() {
      controller.abort();
      if (fileUrl) URL.revokeObjectURL(fileUrl);
    },
  };
}

/**
 * Keeps a progress bar current from a task's successive snapshots: its value, its accessible text,
 * and the recent samples the rate is measured over. Returns what the progress line should say.
 * @param {HTMLProgressElement} bar
 */
export function progressMeter(bar) {
  /** @type {{ at: number, processed: number }[]} */
  const samples = [];
  /**
   * @param {Pick<Task, "status" | "targetCount" | "processedCount">} next
   * @param {string} unit what is counted
   */
  return (next, unit) => {
    const now = performance.now();
    samples.push({ at: now, processed: next.processedCount });
    while (samples.length > 2 && now - (samples[0]?.at ?? now) > RATE_WINDOW_MS) samples.shift();
    const target = next.targetCount;
    const done = next.status === "completed";
    bar.max = Math.max(target, 1);
    bar.value = target === 0 ? (done ? 1 : 0) : Math.min(done ? target : next.processedCount, target);
    const summary = describeProgress(next, samples, unit);
    bar.setAttribute("aria-valuetext", `${summary.percent} %`);
    return summary;
  };
}

/**
 * What the progress line says: processed of target, and while the task runs the rate over the
 * last samples and the time left at that rate.
 * @param {Pick<Task, "status" | "targetCount" | "processedCount">} task
 * @param {{ at: number, processed: number }[]} samples milliseconds and processed counts, oldest first
 * @param {string} [unit] what is counted (an export counts responses or reports)
 */
export function describeProgress(task, samples, unit = "participants") {
  const target = task.targetCount;
  const processed = task.status === "completed" ? Math.max(task.processedCount, target) : task.processedCount;
  // An empty study's task is all done once completed, and not before.
  const share = target === 0 ? (task.status === "completed" ? 100 : 0) : percent(processed, target);
  const parts = [`${count(processed)} of ${count(target)} ${unit} (${share} %)`];
  const first = samples[0];
  const last = samples.at(-1);
  const seconds = first && last ? (last.at - first.at) / 1_000 : 0;
  // Under a fifth of a second of samples says more about the stream's timing than the workers'.
  const rate = seconds >= 0.2 && first && last ? (last.processed - first.processed) / seconds : 0;
  if (!TERMINAL_STATUSES.has(task.status) && rate > 0) {
    parts.push(
      `${count(Math.round(rate))} per second`,
      `about ${duration(((target - processed) / rate) * 1_000)} left`,
    );
  } else {
    parts.push(statusText(task.status));
  }
  return { text: parts.join(" · "), percent: share };
}

/** @param {unknown} error */
export function errorText(error) {
  return error instanceof Error ? error.message : "something went wrong";
}
