// @ts-check
// A study's data out, through case-backend's data-exporter routes: start an export of responses,
// participants or reports with its options and watch it run, then download its file; the study's
// recent exports, its daily response exports and their settings, and a survey's codebook (survey info).
import { ApiError, call, fetchFile, get, saveFile, studyPath } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { between, count, instant } from "./format.js";
import { errorText, progressMeter } from "./task-progress.js";
import { TERMINAL_STATUSES, taskStatusWord } from "./task-status.js";

/**
 * @typedef {import("./api-types.js").DailyExportConfig} DailyExportConfig
 * @typedef {import("./api-types.js").ExportTask} ExportTask
 * @typedef {import("./api-types.js").TaskListItem} TaskListItem
 * @typedef {"responses" | "participants" | "reports"} ExportKind
 */

/**
 * An export's task is read this often while it runs: the workers commit progress once per batch
 * (about as often), and one small read per second per open page costs the API nothing.
 */
const POLL_MS = 1_000;
/** The most recent exports the page lists… */
const RECENT_EXPORTS = 20;
/** …found among this many pages of the study's tasks, of this size (the API's largest page). */
const RECENT_PAGES = 5;
const TASK_PAGE = 100;

/** @type {Record<ExportKind, string>} */
const UNITS = { responses: "responses", participants: "participants", reports: "reports" };
/** @type {Record<string, ExportKind>} */
const KIND_OF_TASK = {
  "export-responses": "responses",
  "export-participants": "participants",
  "export-reports": "reports",
};
/**
 * @param {string} studyKey
 * @param {ExportKind} kind
 * @param {string} [rest]
 */
function exporterPath(studyKey, kind, rest = "") {
  return studyPath(studyKey, `/data-exporter/${kind}${rest}`);
}

/**
 * The file name the browser offers when the API names none.
 * @param {string} studyKey
 * @param {string} what
 * @param {string} extension
 */
function fallbackName(studyKey, what, extension) {
  return `${studyKey}_${what}.${extension}`.replace(/[^A-Za-z0-9._-]/g, "_");
}

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {AbortSignal} signal
 * @param {(stop: () => void) => void} onLeave
 */
export function renderExports(main, studyKey, signal, onLeave) {
  const running = h("div", { className: "export-runs" });
  const recent = h("div", {}, "…");
  const daily = h("div", {}, "…");
  const surveyKeys = h("datalist", { id: "survey-keys" });

  // Read once for the key suggestions and the daily settings' choices; null without the right to
  // list surveys (the study's `manage-surveys`).
  /** @type {Promise<string[] | null>} */
  const surveysRead = get(studyPath(studyKey, "/surveys"), signal)
    .then((answer) => /** @type {{ surveys: { surveyKey: string }[] }} */ (answer).surveys.map((s) => s.surveyKey))
    .catch(() => null);

  const refreshRecent = () => void loadRecent(recent, studyKey, signal);
  const form = exportForm(studyKey, signal, (task, kind, label) => {
    const view = exportProgress(studyKey, kind, task, label, signal, refreshRecent);
    onLeave(() => view.stop());
    running.prepend(view.element);
  });

  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Exports of ", h("code", {}, studyKey)),
    h(
      "p",
      {},
      "Exports run on the workers and can take a while for a large study; you may leave this page, the export goes on. ",
      "Files are in case-backend's formats.",
    ),
    surveyKeys,
    h("section", { "aria-labelledby": "start-title" }, h("h2", { id: "start-title" }, "Start an export"), form),
    running,
    h("section", { "aria-labelledby": "recent-title" }, h("h2", { id: "recent-title" }, "Recent exports"), recent),
    h("section", { "aria-labelledby": "daily-title" }, h("h2", { id: "daily-title" }, "Daily response exports"), daily),
    h(
      "section",
      { "aria-labelledby": "daily-settings-title" },
      h("h2", { id: "daily-settings-title" }, "Daily export settings"),
      dailySettings(studyKey, surveysRead, signal),
    ),
    h(
      "section",
      { "aria-labelledby": "codebook-title" },
      h("h2", { id: "codebook-title" }, "Survey codebook"),
      codebookForm(studyKey, signal),
    ),
  );
  refreshRecent();
  void loadDaily(daily, studyKey, signal);
  // The survey keys are a convenience for typing; without the right to list surveys, type the key.
  void surveysRead.then((keys) => {
    if (keys)
      replace(
        surveyKeys,
        keys.map((key) => h("option", { value: key })),
      );
  });
}

/**
 * @param {string} id
 * @param {string} label
 * @param {HTMLElement} control
 * @param {string} [hint]
 */
function field(id, label, control, hint) {
  return h(
    "div",
    { className: "field" },
    h("label", { for: id }, label),
    control,
    hint ? h("span", { className: "hint", id: `${id}-hint` }, hint) : null,
  );
}

/**
 * The form that starts an export; `onStarted` gets the task the API recorded.
 * @param {string} studyKey
 * @param {AbortSignal} signal
 * @param {(task: ExportTask, kind: ExportKind, label: string) => void} onStarted
 */
function exportForm(studyKey, signal, onStarted) {
  const kind = h(
    "select",
    { id: "export-kind" },
    h("option", { value: "responses" }, "responses of a survey"),
    h("option", { value: "participants" }, "participant states"),
    h("option", { value: "reports" }, "reports"),
  );
  const survey = h("input", { id: "export-survey", type: "text", list: "survey-keys", autocomplete: "off" });
  const format = h(
    "select",
    { id: "export-format" },
    h("option", { value: "wide" }, "CSV, one row per response (wide)"),
    h("option", { value: "long" }, "CSV, one row per answer (long)"),
    h("option", { value: "json" }, "JSON"),
  );
  const shortKeys = h("input", { id: "export-short-keys", type: "checkbox" });
  const separator = h("input", { id: "export-sep", type: "text", value: "-", size: 4 });
  const extraColumns = h("input", { id: "export-extra", type: "text", placeholder: "e.g. engineVersion,language" });
  const reportKey = h("input", { id: "export-report-key", type: "text", autocomplete: "off" });
  const reportType = h(
    "select",
    { id: "export-report-type" },
    h("option", { value: "raw" }, "JSON"),
    h("option", { value: "csv" }, "CSV, one column per data key"),
  );
  // On unless the researcher asks for case-backend's exact bytes: a participant's text must not run
  // as a formula in the spreadsheet the file is opened in.
  const guardFormulas = h("input", {
    id: "export-guard-formulas",
    type: "checkbox",
    "aria-describedby": "export-guard-formulas-hint",
  });
  guardFormulas.checked = true;
  const filter = h("textarea", {
    id: "export-filter",
    rows: 2,
    spellcheck: "false",
    placeholder: '{"participantID": "…"} (optional)',
  });
  const submit = h("button", { type: "submit" }, "Start the export");
  const message = h("div", { "aria-live": "polite" });

  const responseFields = h(
    "div",
    { className: "filters" },
    field("export-survey", "Survey", survey),
    field("export-format", "Format", format),
    field("export-sep", "Question–option separator", separator),
    field("export-extra", "Extra context columns", extraColumns, "comma-separated"),
    h("div", { className: "field choice" }, shortKeys, h("label", { for: "export-short-keys" }, "Short keys")),
  );
  const reportFields = h(
    "div",
    { className: "filters" },
    field("export-report-key", "Report key", reportKey, "all reports when empty"),
    field("export-report-type", "Format", reportType),
  );
  const guardFields = h(
    "div",
    { className: "filters" },
    h(
      "div",
      { className: "field choice" },
      guardFormulas,
      h("label", { for: "export-guard-formulas" }, "Guard against spreadsheet formulas"),
      h(
        "span",
        { className: "hint", id: "export-guard-formulas-hint" },
        "CSV only: participants' text starting with =, +, -, @, tab or CR gets a ' in front. Off: case-backend's exact bytes.",
      ),
    ),
  );
  const show = () => {
    responseFields.hidden = kind.value !== "responses";
    reportFields.hidden = kind.value !== "reports";
    // participant exports are JSON only; nothing to guard there
    guardFields.hidden = kind.value === "participants";
  };
  kind.addEventListener("change", show);
  show();

  const form = h(
    "form",
    { className: "export-form", "aria-label": "Start an export" },
    h("div", { className: "filters" }, field("export-kind", "Export", kind)),
    responseFields,
    reportFields,
    guardFields,
    h("div", { className: "filters" }, field("export-filter", "Filter (Mongo-style JSON)", filter)),
    h("div", { className: "actions" }, submit),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = /** @type {ExportKind} */ (kind.value);
    const query = new URLSearchParams();
    if (filter.value.trim() !== "") {
      try {
        JSON.parse(filter.value);
      } catch {
        replace(message, notice("The filter is not valid JSON.", "error"));
        filter.focus();
        return;
      }
      query.set("filter", filter.value.trim());
    }
    let label = UNITS[chosen];
    if (chosen === "responses") {
      if (survey.value.trim() === "") {
        replace(message, notice("Choose the survey whose responses to export.", "error"));
        survey.focus();
        return;
      }
      query.set("surveyKey", survey.value.trim());
      query.set("format", format.value);
      query.set("questionOptionSep", separator.value);
      query.set("shortKeys", String(shortKeys.checked));
      if (extraColumns.value.trim() !== "") query.set("extraContextColumns", extraColumns.value.trim());
      label = `responses of ${survey.value.trim()}`;
    }
    if (chosen === "reports") {
      query.set("type", reportType.value);
      if (reportKey.value.trim() !== "") {
        query.set("reportKey", reportKey.value.trim());
        label = `reports ${reportKey.value.trim()}`;
      }
    }
    if (chosen !== "participants") query.set("guardFormulas", String(guardFormulas.checked));
    submit.disabled = true;
    replace(message);
    call("POST", exporterPath(studyKey, chosen, `?${query.toString()}`), { signal })
      .then((answer) => {
        const { task, error } = /** @type {{ task?: ExportTask, error?: string }} */ (answer);
        // case-backend answers 200 with only an error when there is nothing to export.
        if (!task) replace(message, notice(error ?? "The export did not start.", "error"));
        else onStarted(task, chosen, label);
      })
      .catch((/** @type {unknown} */ error) => {
        if (!signal.aborted) replace(message, notice(`The export did not start: ${errorText(error)}`, "error"));
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return form;
}

/**
 * An export followed until it ends, then its file offered for download.
 * @param {string} studyKey
 * @param {ExportKind} kind
 * @param {ExportTask} task
 * @param {string} label
 * @param {AbortSignal} pageSignal
 * @param {() => void} onEnded
 */
function exportProgress(studyKey, kind, task, label, pageSignal, onEnded) {
  const controller = new AbortController();
  const signal = AbortSignal.any([pageSignal, controller.signal]);
  const bar = h("progress", { id: `progress-${task.id}`, max: 1, value: 0 });
  const progressText = h("p", { className: "progress-text", role: "status" });
  const facts = h("div");
  const message = h("div", { "aria-live": "polite" });
  const actions = h("div", { className: "actions" });
  const element = h(
    "section",
    {
      className: "task-progress export-progress",
      "aria-labelledby": `export-heading-${task.id}`,
      "data-task-id": task.id,
    },
    h("h3", { id: `export-heading-${task.id}` }, `Export of ${label} `, h("code", {}, task.id)),
    facts,
    h("label", { for: `progress-${task.id}` }, "Progress"),
    bar,
    progressText,
    actions,
    message,
  );
  const meter = progressMeter(bar);

  /** @param {ExportTask} next */
  const show = (next) => {
    element.dataset.status = next.status;
    const summary = meter(next, UNITS[kind]);
    const done = next.status === "completed";
    progressText.textContent = summary.text;
    replace(
      facts,
      details([
        ["Status", h("span", { className: `status status-${next.status}` }, taskStatusWord(next.status))],
        ["Started by", next.createdBy],
        ["Created", instant(next.createdAt)],
      ]),
    );
    if (next.error) replace(message, notice(next.error, next.status === "failed" ? "error" : "note"));
    if (done)
      replace(
        actions,
        downloadButton(
          exporterPath(studyKey, kind, `/task/${encodeURIComponent(next.id)}/result`),
          fallbackName(studyKey, kind, next.fileType === "text/csv" ? "csv" : "json"),
          message,
          signal,
        ),
      );
  };

  const follow = async () => {
    let current = task;
    while (!signal.aborted && !TERMINAL_STATUSES.has(current.status)) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (signal.aborted) return;
      try {
        const answer = /** @type {{ task: ExportTask }} */ (
          await get(exporterPath(studyKey, kind, `/task/${encodeURIComponent(current.id)}`), signal)
        );
        current = answer.task;
        show(current);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status < 500) {
          replace(message, notice(`The export can no longer be followed: ${error.message}`, "error"));
          return;
        }
        // a passing network or server trouble: the next read tries again
      }
    }
    if (!signal.aborted) onEnded();
  };

  show(task);
  void follow();
  return { element, stop: () => controller.abort() };
}

/**
 * A button that fetches a file with the credential and hands it to the browser.
 * @param {string} path
 * @param {string} fallback
 * @param {Element} message where a failure is told
 * @param {AbortSignal} signal
 * @param {string} [text]
 */
function downloadButton(path, fallback, message, signal, text = "Download the file") {
  const button = h("button", { type: "button", className: "download" }, text);
  button.addEventListener("click", () => {
    button.disabled = true;
    fetchFile(path, fallback, signal)
      .then((file) => {
        saveFile(file);
        replace(message, h("p", { className: "muted" }, `Downloaded ${file.fileName}.`));
      })
      .catch((/** @type {unknown} */ error) => {
        if (!signal.aborted) replace(message, notice(`The file could not be downloaded: ${errorText(error)}`, "error"));
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return button;
}

/**
 * The study's most recent export tasks the credential may see, newest first, with their files.
 * The task list has every kind; exports are picked from its most recent pages, so a study with
 * hourly timer ticks still shows its exports of the last days.
 * @param {HTMLElement} target
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
async function loadRecent(target, studyKey, signal) {
  try {
    /** @type {TaskListItem[]} */
    const exports = [];
    /** @type {string | null} */
    let cursor = null;
    for (let pages = 0; pages < RECENT_PAGES && exports.length < RECENT_EXPORTS; pages++) {
      const query = new URLSearchParams({ limit: String(TASK_PAGE) });
      if (cursor) query.set("cursor", cursor);
      const page = /** @type {{ tasks: TaskListItem[], nextCursor: string | null }} */ (
        await get(studyPath(studyKey, `/run-actions/participants/tasks?${query.toString()}`), signal)
      );
      exports.push(...page.tasks.filter((task) => task.kind in KIND_OF_TASK));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    const tasks = exports.slice(0, RECENT_EXPORTS);
    if (tasks.length === 0) {
      replace(target, h("p", { className: "muted" }, "No exports yet."));
      return;
    }
    const message = h("div", { "aria-live": "polite" });
    replace(
      target,
      h(
        "table",
        { className: "exports" },
        h("caption", {}, "Exports, newest first"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Created", "Export", "Status", "Started by", "Duration", "Rows", "File"].map((label) =>
              h("th", { scope: "col" }, label),
            ),
          ),
        ),
        h(
          "tbody",
          {},
          tasks.map((task) => recentRow(studyKey, task, message, signal)),
        ),
      ),
      message,
    );
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 403)
      replace(target, h("p", { className: "muted" }, `not shown: ${error.message}`));
    else replace(target, notice(`The exports could not be read: ${errorText(error)}`, "error"));
  }
}

/**
 * @param {string} studyKey
 * @param {TaskListItem} task
 * @param {Element} message
 * @param {AbortSignal} signal
 */
function recentRow(studyKey, task, message, signal) {
  const kind = KIND_OF_TASK[task.kind] ?? "responses";
  return h(
    "tr",
    { "data-task-id": task.id, "data-status": task.status },
    h("td", {}, instant(task.createdAt)),
    h("td", {}, UNITS[kind]),
    h("td", {}, h("span", { className: `status status-${task.status}` }, taskStatusWord(task.status))),
    h("td", {}, task.createdBy),
    h("td", {}, between(task.startedAt, task.finishedAt)),
    h("td", { className: "number" }, count(task.processedCount)),
    h(
      "td",
      {},
      task.status === "completed"
        ? downloadButton(
            exporterPath(studyKey, kind, `/task/${encodeURIComponent(task.id)}/result`),
            fallbackName(studyKey, kind, "csv"),
            message,
            signal,
            "Download",
          )
        : task.error
          ? h("span", { className: "muted" }, task.error)
          : "—",
    ),
  );
}

/**
 * base64 of a file name's UTF-8 bytes: the `{exportID}` of a daily export's download.
 * @param {string} name
 */
export function exportId(name) {
  const bytes = new TextEncoder().encode(name);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * @param {HTMLElement} target
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
async function loadDaily(target, studyKey, signal) {
  try {
    const { dailyExports } = /** @type {{ dailyExports: string[] | null }} */ (
      await get(studyPath(studyKey, "/data-exporter/responses/daily-exports"), signal)
    );
    const names = [...(dailyExports ?? [])].sort().reverse();
    if (names.length === 0) {
      replace(target, h("p", { className: "muted" }, "No daily exports yet."));
      return;
    }
    const message = h("div", { "aria-live": "polite" });
    replace(
      target,
      h(
        "ul",
        { className: "daily-exports" },
        names.map((name) =>
          h(
            "li",
            {},
            h("code", {}, name),
            " ",
            downloadButton(
              studyPath(studyKey, `/data-exporter/responses/daily-exports/${exportId(name)}`),
              name,
              message,
              signal,
              "Download",
            ),
          ),
        ),
      ),
      message,
    );
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 403)
      replace(target, h("p", { className: "muted" }, `not shown: ${error.message}`));
    else replace(target, notice(`The daily exports could not be read: ${errorText(error)}`, "error"));
  }
}

/** @type {Record<string, string>} */
const FORMAT_WORDS = {
  wide: "CSV, one row per response (wide)",
  long: "CSV, one row per answer (long)",
  json: "JSON",
};

/**
 * The study's daily export settings: which surveys the nightly job exports, in which format. Read
 * with the survey list (null when it cannot be read) before the form is shown.
 * @param {string} studyKey
 * @param {Promise<string[] | null>} surveysRead
 * @param {AbortSignal} signal
 */
function dailySettings(studyKey, surveysRead, signal) {
  const target = h("div", { className: "daily-settings" }, "…");
  const path = studyPath(studyKey, "/daily-export-config");
  Promise.all([get(path, signal), surveysRead])
    .then(([answer, listed]) => {
      const { config } = /** @type {{ config: DailyExportConfig | null }} */ (answer);
      replace(target, dailySettingsForm(path, config, listed, signal));
    })
    .catch((/** @type {unknown} */ error) => {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status === 403)
        replace(target, h("p", { className: "muted" }, `not shown: ${error.message}`));
      else replace(target, notice(`The daily export settings could not be read: ${errorText(error)}`, "error"));
    });
  return target;
}

/**
 * What is stored, in words.
 * @param {DailyExportConfig | null} config
 */
function dailySummary(config) {
  if (!config) return h("p", { className: "muted" }, "No daily exports are set up.");
  const { options } = config;
  const meta = Object.entries(options.includeMeta)
    .filter(([, on]) => on)
    .map(([name]) => name);
  return details([
    [
      "Now",
      config.enabled
        ? config.surveyKeys.length === 0
          ? "on, but no survey is chosen"
          : `on: ${config.surveyKeys.join(", ")} every day`
        : "off (the settings are kept)",
    ],
    ["Format", `${FORMAT_WORDS[options.format] ?? options.format}${options.gzip ? ", gzip-compressed" : ""}`],
    ["Formula guard", options.guardFormulas ? "on" : "off: case-backend's exact bytes"],
    // Set with the CLI or the API; a save here keeps them.
    [
      "Other options",
      `separator "${options.questionOptionSep}", short keys ${options.shortKeys ? "yes" : "no"}, ` +
        `extra columns ${options.extraContextColumns.join(", ") || "none"}, meta ${meta.join(", ") || "none"}`,
    ],
    ["Last changed", `${instant(config.updatedAt)} by ${config.updatedBy}`],
  ]);
}

/**
 * The form over the stored settings. A save sends what it shows and the stored options it does not
 * show (the route would otherwise put CASE's defaults in their place).
 * @param {string} path
 * @param {DailyExportConfig | null} config
 * @param {string[] | null} listed the study's surveys; null when they cannot be listed
 * @param {AbortSignal} signal
 */
function dailySettingsForm(path, config, listed, signal) {
  let stored = config;
  const summary = h("div", { className: "daily-summary" }, dailySummary(stored));
  const chosen = new Set(stored?.surveyKeys ?? []);
  // A stored survey stays choosable (and can be unchosen) when the list cannot be read.
  const keys = [...new Set([...(listed ?? []), ...chosen])].sort();
  const boxes = keys.map((key, index) => {
    const box = h("input", { type: "checkbox", id: `daily-survey-${index}`, value: key });
    box.checked = chosen.has(key);
    return box;
  });
  const enabled = h("input", { id: "daily-enabled", type: "checkbox" });
  enabled.checked = stored?.enabled ?? true;
  const format = h(
    "select",
    { id: "daily-format" },
    Object.entries(FORMAT_WORDS).map(([value, words]) => h("option", { value }, words)),
  );
  format.value = stored?.options.format ?? "wide";
  const gzip = h("input", { id: "daily-gzip", type: "checkbox" });
  gzip.checked = stored?.options.gzip ?? false;
  const guardFormulas = h("input", { id: "daily-guard-formulas", type: "checkbox" });
  guardFormulas.checked = stored?.options.guardFormulas ?? true;
  const submit = h("button", { type: "submit" }, "Save the daily export settings");
  const message = h("div", { "aria-live": "polite" });

  const form = h(
    "form",
    { className: "daily-settings-form", "aria-label": "Daily export settings" },
    h(
      "fieldset",
      { className: "daily-surveys" },
      h("legend", {}, "Surveys exported every day"),
      boxes.length === 0
        ? h(
            "p",
            { className: "muted" },
            listed ? "The study has no surveys yet." : "The study's surveys cannot be listed.",
          )
        : boxes.map((box) =>
            h("div", { className: "field choice" }, box, h("label", { for: box.id }, h("code", {}, box.value))),
          ),
      listed ? null : h("p", { className: "hint" }, "Listing the surveys takes the study's manage-surveys right."),
    ),
    h(
      "div",
      { className: "filters" },
      field("daily-format", "Format", format),
      h("div", { className: "field choice" }, gzip, h("label", { for: "daily-gzip" }, "Compress the files (gzip)")),
      h(
        "div",
        { className: "field choice" },
        guardFormulas,
        h("label", { for: "daily-guard-formulas" }, "Guard against spreadsheet formulas"),
      ),
      h("div", { className: "field choice" }, enabled, h("label", { for: "daily-enabled" }, "Export every day")),
    ),
    h("div", { className: "actions" }, submit),
    message,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const kept = stored
      ? {
          questionOptionSep: stored.options.questionOptionSep,
          shortKeys: stored.options.shortKeys,
          extraContextColumns: stored.options.extraContextColumns,
          includeMeta: stored.options.includeMeta,
        }
      : {};
    const body = {
      ...kept,
      surveyKeys: boxes.filter((box) => box.checked).map((box) => box.value),
      enabled: enabled.checked,
      format: format.value,
      gzip: gzip.checked,
      guardFormulas: guardFormulas.checked,
    };
    submit.disabled = true;
    replace(message);
    call("PUT", path, { body, signal })
      .then((answer) => {
        stored = /** @type {{ config: DailyExportConfig }} */ (answer).config;
        replace(summary, dailySummary(stored));
        replace(message, notice("The daily export settings are saved.", "note"));
      })
      .catch((/** @type {unknown} */ error) => {
        if (!signal.aborted)
          replace(message, notice(`The daily export settings were not saved: ${errorText(error)}`, "error"));
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return h("div", {}, summary, form);
}

/**
 * A survey's codebook: every version's questions, options and labels in one language.
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
function codebookForm(studyKey, signal) {
  const survey = h("input", { id: "codebook-survey", type: "text", list: "survey-keys", autocomplete: "off" });
  const language = h("input", { id: "codebook-language", type: "text", value: "en", size: 6 });
  const format = h(
    "select",
    { id: "codebook-format" },
    h("option", { value: "csv" }, "CSV"),
    h("option", { value: "json" }, "JSON"),
  );
  const submit = h("button", { type: "submit", className: "secondary" }, "Download the codebook");
  const message = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { className: "filters", "aria-label": "Download a survey codebook" },
    field("codebook-survey", "Survey", survey),
    field("codebook-language", "Label language", language),
    field("codebook-format", "Format", format),
    h("div", { className: "field" }, submit),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const surveyKey = survey.value.trim();
    if (surveyKey === "") {
      replace(message, notice("Choose the survey whose codebook to download.", "error"));
      survey.focus();
      return;
    }
    const query = new URLSearchParams({ surveyKey, format: format.value, language: language.value.trim() || "en" });
    submit.disabled = true;
    fetchFile(
      studyPath(studyKey, `/data-exporter/survey-info?${query.toString()}`),
      fallbackName(studyKey, `${surveyKey}_survey-info`, format.value),
      signal,
    )
      .then((file) => {
        saveFile(file);
        replace(message, h("p", { className: "muted" }, `Downloaded ${file.fileName}.`));
      })
      .catch((/** @type {unknown} */ error) => {
        if (!signal.aborted)
          replace(message, notice(`The codebook could not be downloaded: ${errorText(error)}`, "error"));
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return h("div", {}, form, message);
}
