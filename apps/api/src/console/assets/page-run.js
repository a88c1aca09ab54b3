// @ts-check
// Run actions on a study: the rules editor, dry run or not, start, and the task followed live.
import { ApiError, call, studyPath } from "./api.js";
import { h, notice, replace } from "./dom.js";
import { createRulesEditor } from "./rules-editor.js";
import { createTaskProgress, errorText } from "./task-progress.js";
import { studyHref } from "./study-links.js";

/** @typedef {import("./api-types.js").Task} Task */

/** A first rule to edit: it marks every participant, and the run starts as a dry run. */
const EXAMPLE_RULES = `[
  {
    "name": "UPDATE_FLAG",
    "data": [
      { "dtype": "str", "str": "reviewed" },
      { "dtype": "str", "str": "yes" }
    ]
  }
]`;

/**
 * What each study's editor held when the page was left, while the tab stays open.
 * @type {Map<string, string>}
 */
const drafts = new Map();

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {(stop: () => void) => void} onLeave
 */
export function renderRun(main, studyKey, onLeave) {
  /** @type {unknown[] | null} */
  let validRules = null;
  const start = h("button", { type: "submit", disabled: true }, "Start run");
  const dryRun = h("input", { type: "checkbox", id: "dry-run", checked: true });
  const outcome = h("div", { "aria-live": "polite" });
  const progress = h("div", { className: "run-progress" });
  const editor = createRulesEditor({
    studyKey,
    text: drafts.get(studyKey) ?? EXAMPLE_RULES,
    onChange: (state, text) => {
      drafts.set(studyKey, text);
      validRules = state.state === "valid" ? state.rules : null;
      start.disabled = validRules === null;
    },
  });
  onLeave(() => editor.stop());

  const form = h(
    "form",
    { className: "run-form", "aria-labelledby": "page-title" },
    editor.element,
    h(
      "div",
      { className: "choice" },
      dryRun,
      h("label", { for: "dry-run" }, "Dry run: evaluate and count the changes, write nothing"),
    ),
    h("div", { className: "actions" }, start),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!validRules) return;
    const rules = validRules;
    start.disabled = true;
    replace(outcome, notice("Starting…"));
    call("POST", studyPath(studyKey, "/run-actions/participants/"), { body: { rules, dryRun: dryRun.checked } })
      .then((answer) => {
        const { task } = /** @type {{ task: Task }} */ (answer);
        replace(
          outcome,
          h(
            "p",
            {},
            "Started. ",
            h("a", { href: `${studyHref(studyKey, "tasks")}/${encodeURIComponent(task.id)}` }, "Open the task"),
            ".",
          ),
        );
        const ruleNames = rules.map((rule) =>
          typeof rule === "object" &&
          rule !== null &&
          typeof (/** @type {{ name?: unknown }} */ (rule).name) === "string"
            ? String(/** @type {{ name: string }} */ (rule).name)
            : "",
        );
        const view = createTaskProgress({ studyKey, task, ruleNames });
        onLeave(() => view.stop());
        progress.prepend(view.element);
      })
      .catch((/** @type {unknown} */ error) => {
        replace(
          outcome,
          notice(`Not started: ${error instanceof ApiError ? error.message : errorText(error)}`, "error"),
        );
      })
      .finally(() => {
        start.disabled = validRules === null;
      });
  });

  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Run actions on ", h("code", {}, studyKey)),
    h(
      "p",
      {},
      "The rules run once on every participant of the study (except temporary participants and deleted accounts), " +
        "with a CUSTOM event, as a background task.",
    ),
    form,
    outcome,
    progress,
  );
}
