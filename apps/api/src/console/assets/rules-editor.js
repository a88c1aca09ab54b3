// @ts-check
// The rules editor: a textarea for the JSON rule set over a copy of its text in which every
// problem is marked. The JSON syntax is checked here at each keystroke; the rules themselves by
// the API's validator (POST …/run-actions/validate, the check a run makes before it
// starts), a moment after typing stops, and each problem is listed with its JSON path, which marks
// its place in the text.
import { ApiError, call, studyPath } from "./api.js";
import { h, replace } from "./dom.js";
import { JsonSyntaxError, lineAndColumn, locate, parseSpans } from "./json-spans.js";
import { markedText } from "./marked-text.js";

/**
 * @typedef {import("./api-types.js").RuleIssue} RuleIssue
 * @typedef {{ state: "checking" } | { state: "valid", rules: unknown[] } | { state: "invalid" }} EditorState
 */

/** Long enough not to call the API at every key of a word, short enough to feel immediate. */
const VALIDATE_AFTER_MS = 250;

/**
 * @param {{ studyKey: string, text: string, onChange: (state: EditorState, text: string) => void }} options
 */
export function createRulesEditor({ studyKey, text, onChange }) {
  const backdrop = h("pre", { className: "editor-backdrop", "aria-hidden": "true" });
  const textarea = h("textarea", {
    id: "rules-text",
    className: "editor-text",
    spellcheck: "false",
    autocomplete: "off",
    autocapitalize: "off",
    rows: 16,
    "aria-describedby": "rules-help rules-status",
  });
  textarea.value = text;
  const status = h("p", { id: "rules-status", className: "editor-status", role: "status" });
  const issueList = h("ol", { className: "issues", "aria-label": "Problems in the rules" });
  const element = h(
    "div",
    { className: "editor-field" },
    h("label", { for: "rules-text" }, "Rules"),
    h(
      "p",
      { id: "rules-help", className: "hint" },
      "A JSON array of CASE study-engine actions. Problems are marked as you type; choose one to select it.",
    ),
    h("div", { className: "editor" }, backdrop, textarea),
    status,
    issueList,
  );

  /** @type {AbortController | undefined} */
  let pending;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let generation = 0;

  const syncScroll = () => {
    backdrop.scrollTop = textarea.scrollTop;
    backdrop.scrollLeft = textarea.scrollLeft;
  };

  /**
   * @param {{ start: number, end: number, className: string, index?: number }[]} ranges
   */
  const paint = (ranges) => {
    // The trailing space keeps a last empty line (and an error at the very end) visible.
    replace(backdrop, markedText(`${textarea.value} `, ranges));
    syncScroll();
  };

  /**
   * @param {number} start
   * @param {number} end
   */
  const select = (start, end) => {
    textarea.focus();
    textarea.setSelectionRange(start, Math.max(end, start + 1));
    const { line } = lineAndColumn(textarea.value, start);
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
    textarea.scrollTop = Math.max(0, (line - 3) * lineHeight);
    syncScroll();
  };

  /**
   * @param {string} summary
   * @param {{ label: string, message: string, start: number, end: number }[]} problems
   */
  const showProblems = (summary, problems) => {
    status.textContent = summary;
    textarea.setAttribute("aria-invalid", String(problems.length > 0));
    replace(
      issueList,
      problems.map((problem, index) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              className: "issue-path",
              onclick: () => {
                for (const mark of backdrop.querySelectorAll("mark.active")) mark.classList.remove("active");
                backdrop.querySelector(`mark[data-issue="${index}"]`)?.classList.add("active");
                select(problem.start, problem.end);
              },
            },
            problem.label,
          ),
          " ",
          h("span", { className: "issue-message" }, problem.message),
        ),
      ),
    );
    paint(problems.map((problem, index) => ({ start: problem.start, end: problem.end, className: "problem", index })));
  };

  const check = () => {
    const current = ++generation;
    pending?.abort();
    clearTimeout(timer);
    const source = textarea.value;
    let root;
    try {
      root = parseSpans(source);
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error;
      const { line, column } = lineAndColumn(source, error.position);
      showProblems("The text is not valid JSON.", [
        {
          label: `line ${line}, column ${column}`,
          message: error.message,
          start: error.position,
          end: error.position + 1,
        },
      ]);
      onChange({ state: "invalid" }, source);
      return;
    }
    const rules = /** @type {unknown} */ (JSON.parse(source));
    if (!Array.isArray(rules)) {
      showProblems("Rules must be a JSON array.", [
        { label: "rules", message: "must be an array of rules", start: root.start, end: root.end },
      ]);
      onChange({ state: "invalid" }, source);
      return;
    }
    status.textContent = "Checking the rules…";
    paint([]);
    onChange({ state: "checking" }, source);
    timer = setTimeout(() => {
      const controller = new AbortController();
      pending = controller;
      call("POST", studyPath(studyKey, "/run-actions/validate"), {
        body: { rules },
        signal: controller.signal,
      })
        .then((answer) => {
          if (current !== generation) return;
          const { valid, issues, issueCount } =
            /** @type {{ valid: boolean, issues: RuleIssue[], issueCount: number }} */ (answer);
          if (valid) {
            showProblems(`Valid: ${rules.length} ${rules.length === 1 ? "rule" : "rules"}.`, []);
            onChange({ state: "valid", rules }, source);
            return;
          }
          const more = issueCount > issues.length ? ` (the first ${issues.length} are listed)` : "";
          showProblems(
            `${issueCount} ${issueCount === 1 ? "problem" : "problems"}${more}.`,
            issues.map((issue) => ({ label: issue.path, message: issue.message, ...locate(root, issue.path) })),
          );
          onChange({ state: "invalid" }, source);
        })
        .catch((/** @type {unknown} */ error) => {
          if (current !== generation || controller.signal.aborted) return;
          const message = error instanceof ApiError ? error.message : "the API could not be reached";
          showProblems(`The rules could not be checked: ${message}`, []);
          onChange({ state: "invalid" }, source);
        });
    }, VALIDATE_AFTER_MS);
  };

  textarea.addEventListener("input", check);
  textarea.addEventListener("scroll", syncScroll);
  check();

  return {
    element,
    /** Stops pending checks (the page is left). */
    stop() {
      generation++;
      pending?.abort();
      clearTimeout(timer);
    },
  };
}
