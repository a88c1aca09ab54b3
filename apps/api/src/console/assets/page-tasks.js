// @ts-check
// A study's tasks (run-actions, timer ticks, exports), newest first; and one task, live or final.
import { get, studyPath, taskPath } from "./api.js";
import { h, notice, replace } from "./dom.js";
import { between, count, instant } from "./format.js";
import { createTaskProgress, errorText, isExportTask, progressUnit, taskKindName } from "./task-progress.js";
import { studyHref, studyLink } from "./study-links.js";
import { taskStatusWord } from "./task-status.js";

/**
 * @typedef {import("./api-types.js").Task} Task
 * @typedef {import("./api-types.js").TaskListItem} TaskListItem
 */

/** One screenful; "Show more" fetches the next page. */
const PAGE_SIZE = 25;

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
export function renderTasks(main, studyKey, signal) {
  const kind = h(
    "select",
    { id: "task-kind" },
    h("option", { value: "" }, "all tasks"),
    h("option", { value: "run-actions" }, "run-actions"),
    h("option", { value: "timer" }, "timer ticks"),
  );
  const body = h("tbody");
  const table = h(
    "table",
    { className: "tasks" },
    h("caption", {}, "Tasks, newest first"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Created", "Kind", "Status", "Started by", "Duration", "Processed", "File"].map((label) =>
          h("th", { scope: "col" }, label),
        ),
      ),
    ),
    body,
  );
  const status = h("div", { "aria-live": "polite" });
  const more = h("button", { type: "button", hidden: true }, "Show more");
  /** @type {string | null} */
  let cursor = null;

  const load = async () => {
    more.disabled = true;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (kind.value) query.set("kind", kind.value);
    if (cursor) query.set("cursor", cursor);
    try {
      const page = /** @type {{ tasks: TaskListItem[], nextCursor: string | null }} */ (
        await get(studyPath(studyKey, `/run-actions/participants/tasks?${query.toString()}`), signal)
      );
      body.append(...page.tasks.map((task) => taskRow(studyKey, task)));
      cursor = page.nextCursor;
      more.hidden = cursor === null;
      replace(status, body.rows.length === 0 ? notice("No tasks you may see yet.") : null);
    } catch (error) {
      if (!signal.aborted) replace(status, notice(`The tasks could not be read: ${errorText(error)}`, "error"));
    } finally {
      more.disabled = false;
    }
  };
  kind.addEventListener("change", () => {
    body.replaceChildren();
    cursor = null;
    void load();
  });
  more.addEventListener("click", () => void load());

  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Tasks of ", h("code", {}, studyKey)),
    h(
      "p",
      {},
      "Your run-actions and exports, and the study's timer ticks (an admin sees every task). ",
      studyLink(studyKey, "run", "Start a run"),
      " or ",
      studyLink(studyKey, "exports", "an export"),
      ".",
    ),
    h("div", { className: "filters" }, h("label", { for: "task-kind" }, "Show"), kind),
    table,
    status,
    more,
  );
  void load();
}

/**
 * @param {string} studyKey
 * @param {TaskListItem} task
 */
function taskRow(studyKey, task) {
  const unit = progressUnit(task.kind);
  return h(
    "tr",
    { "data-task-id": task.id, "data-status": task.status, "data-kind": task.kind },
    h(
      "td",
      {},
      h("a", { href: `${studyHref(studyKey, "tasks")}/${encodeURIComponent(task.id)}` }, instant(task.createdAt)),
    ),
    h("td", {}, taskKindName(task)),
    h("td", {}, h("span", { className: `status status-${task.status}` }, taskStatusWord(task.status))),
    h("td", {}, task.createdBy),
    h("td", {}, between(task.startedAt, task.finishedAt)),
    h("td", { className: "number" }, `${count(task.processedCount)} / ${count(task.targetCount)} ${unit}`),
    h("td", {}, fileCell(studyKey, task)),
  );
}

/**
 * A completed export's file is downloaded on the exports page, which reads it through the data
 * exporter with the file's name and type. A run's result file is on the task's own page (the
 * row's first link), so its cell stays empty.
 * @param {string} studyKey
 * @param {TaskListItem} task
 */
function fileCell(studyKey, task) {
  if (task.status !== "completed" || !isExportTask(task.kind)) return "—";
  return studyLink(studyKey, "exports", "Download on the exports page");
}

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {string} taskId
 * @param {AbortSignal} signal
 * @param {(stop: () => void) => void} onLeave
 */
export async function renderTask(main, studyKey, taskId, signal, onLeave) {
  const holder = h("div", {}, notice("Loading the task…"));
  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Task of ", h("code", {}, studyKey)),
    h("p", {}, studyLink(studyKey, "tasks", "All tasks of the study")),
    holder,
  );
  try {
    const { task } = /** @type {{ task: Task }} */ (await get(taskPath(studyKey, taskId), signal));
    const view = createTaskProgress({ studyKey, task });
    onLeave(() => view.stop());
    replace(holder, view.element);
  } catch (error) {
    if (!signal.aborted) replace(holder, notice(`The task could not be read: ${errorText(error)}`, "error"));
  }
}
