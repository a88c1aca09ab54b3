// @ts-check
// A study's rule failures, filtered by study, rule, event and time; one opened shows its event
// and, when its rules version can be read, the rule with the failing expression marked.
import { ApiError, get, studyPath } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { count, instant } from "./format.js";
import { locate, parseSpans } from "./json-spans.js";
import { markedText } from "./marked-text.js";
import { errorText } from "./task-progress.js";
import { studyHref } from "./study-links.js";

/**
 * @typedef {import("./api-types.js").RuleFailure} RuleFailure
 * @typedef {import("./api-types.js").Study} Study
 */

/** A page of the API; the console filters rule and end time itself, so it may read several. */
const API_PAGE = 100;
/** "Show more" reads pages until this many more failures match… */
const SHOWN_PER_STEP = 25;
/** …or this many pages were read, so a filter that matches nothing does not read the whole history. */
const PAGES_PER_STEP = 10;
const EVENT_TYPES = ["ENTER", "SUBMIT", "LEAVE", "MERGE", "CUSTOM", "TIMER"];

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
export function renderFailures(main, studyKey, signal) {
  const study = h("select", { id: "filter-study" }, h("option", { value: studyKey }, studyKey));
  const rule = h("input", { id: "filter-rule", type: "number", min: 0, step: 1, inputmode: "numeric" });
  const eventType = h(
    "select",
    { id: "filter-event" },
    h("option", { value: "" }, "any event"),
    EVENT_TYPES.map((type) => h("option", { value: type }, type)),
  );
  const since = h("input", { id: "filter-since", type: "datetime-local", step: 1 });
  const until = h("input", { id: "filter-until", type: "datetime-local", step: 1 });
  /** @param {string} id @param {string} label @param {HTMLElement} control */
  const field = (id, label, control) => h("div", { className: "field" }, h("label", { for: id }, label), control);
  const filters = h(
    "form",
    { className: "filters", "aria-label": "Filter the rule failures" },
    field("filter-study", "Study", study),
    field("filter-rule", "Rule (index)", rule),
    field("filter-event", "Event", eventType),
    field("filter-since", "From", since),
    field("filter-until", "Until", until),
    h("div", { className: "field" }, h("button", { type: "submit" }, "Apply")),
  );
  const body = h("tbody");
  const table = h(
    "table",
    { className: "failures" },
    h("caption", {}, "Rule failures, most recent first"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Occurred", "Event", "Participant", "Rule", "Path", "Message"].map((label) =>
          h("th", { scope: "col" }, label),
        ),
      ),
    ),
    body,
  );
  const status = h("div", { "aria-live": "polite" });
  const more = h("button", { type: "button", hidden: true }, "Show more");
  const detail = h("section", {
    id: "failure-detail",
    className: "failure-detail",
    "aria-labelledby": "failure-title",
    hidden: true,
  });

  /** @type {string | null} */
  let cursor = null;
  let exhausted = false;

  /** @param {RuleFailure} failure */
  const matches = (failure) => {
    if (rule.value !== "" && failure.ruleIndex !== Number(rule.value)) return false;
    if (until.value !== "" && Date.parse(failure.occurredAt) > new Date(until.value).getTime()) return false;
    return true;
  };

  const load = async () => {
    more.disabled = true;
    let added = 0;
    try {
      for (let pages = 0; pages < PAGES_PER_STEP && added < SHOWN_PER_STEP && !exhausted; pages++) {
        const query = new URLSearchParams({ limit: String(API_PAGE) });
        if (eventType.value) query.set("eventType", eventType.value);
        if (since.value) query.set("since", new Date(since.value).toISOString());
        if (cursor) query.set("cursor", cursor);
        const page = /** @type {{ ruleFailures: RuleFailure[], nextCursor: string | null }} */ (
          await get(studyPath(studyKey, `/rule-failures?${query.toString()}`), signal)
        );
        const shown = page.ruleFailures.filter(matches);
        body.append(...shown.map((failure) => failureRow(failure)));
        added += shown.length;
        cursor = page.nextCursor;
        exhausted = cursor === null;
      }
      more.hidden = exhausted;
      replace(
        status,
        body.rows.length === 0
          ? notice(
              exhausted ? "No rule failures match." : "None among the most recent ones; show more to look further.",
            )
          : h("p", { className: "muted" }, `${count(body.rows.length)} shown.`),
      );
    } catch (error) {
      if (!signal.aborted) replace(status, notice(`The rule failures could not be read: ${errorText(error)}`, "error"));
    } finally {
      more.disabled = false;
    }
  };

  /** @param {RuleFailure} failure */
  const failureRow = (failure) =>
    h(
      "tr",
      { "data-failure-id": failure.id },
      h(
        "td",
        {},
        h(
          "button",
          { type: "button", className: "link", onclick: () => void open(failure) },
          instant(failure.occurredAt),
        ),
      ),
      h("td", {}, failure.eventType, failure.eventKey ? ` ${failure.eventKey}` : ""),
      h("td", {}, h("code", {}, failure.participantId)),
      h("td", { className: "number" }, String(failure.ruleIndex)),
      h("td", {}, h("code", {}, failure.path)),
      h("td", {}, failure.message),
    );

  /** @param {RuleFailure} failure */
  const open = async (failure) => {
    const ruleView = h("div", {}, notice("Loading the rule…"));
    replace(
      detail,
      h("h2", { id: "failure-title", tabindex: "-1" }, `Rule failure of ${failure.participantId}`),
      details([
        ["Occurred", instant(failure.occurredAt)],
        ["Event", `${failure.eventType}${failure.eventKey ? ` (${failure.eventKey})` : ""}`],
        ["Participant", h("code", {}, failure.participantId)],
        [
          "Rules",
          failure.rulesVersion === null ? "the rules of a run-actions task" : `version ${failure.rulesVersion}`,
        ],
        [
          "Task",
          failure.taskId
            ? h("a", { href: `${studyHref(studyKey, "tasks")}/${encodeURIComponent(failure.taskId)}` }, failure.taskId)
            : "none (a participant event)",
        ],
        ["Rule", String(failure.ruleIndex)],
        ["Failing expression", h("code", { className: "failure-path" }, failure.path)],
        ["Message", failure.message],
        ["Outcome", failure.outcome],
      ]),
      h("h3", {}, "The rule"),
      ruleView,
    );
    detail.hidden = false;
    detail.querySelector("h2")?.focus();
    if (failure.rulesVersion === null) {
      replace(
        ruleView,
        h(
          "p",
          { className: "muted" },
          "A task's own rules are not kept for reading; the path above names the expression.",
        ),
      );
      return;
    }
    try {
      const version = /** @type {{ rules: unknown[] }} */ (
        await get(studyPath(studyKey, `/rules/${failure.rulesVersion}`), signal)
      );
      const text = JSON.stringify(version.rules, null, 2);
      const span = locate(parseSpans(text), failure.path);
      const pre = h("pre", {
        className: "rule-source",
        tabindex: "0",
        "aria-label": `Rules version ${failure.rulesVersion}`,
      });
      pre.append(
        markedText(text, [{ start: span.start, end: span.end, className: "problem active", title: failure.path }]),
      );
      replace(ruleView, pre);
      const mark = pre.querySelector("mark");
      if (mark) pre.scrollTop = Math.max(0, mark.offsetTop - pre.clientHeight / 3);
    } catch (error) {
      if (signal.aborted) return;
      const text = error instanceof ApiError && error.status === 403 ? `not shown: ${error.message}` : errorText(error);
      replace(ruleView, h("p", { className: "muted" }, text));
    }
  };

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    if (study.value !== studyKey) {
      location.hash = studyHref(study.value, "failures");
      return;
    }
    body.replaceChildren();
    cursor = null;
    exhausted = false;
    detail.hidden = true;
    void load();
  });
  more.addEventListener("click", () => void load());

  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Rule failures of ", h("code", {}, studyKey)),
    filters,
    table,
    status,
    more,
    detail,
  );
  void load();
  get("/v1/studies", signal)
    .then((answer) => {
      const { studies } = /** @type {{ studies: Study[] }} */ (answer);
      replace(
        study,
        studies.map((entry) => h("option", { value: entry.key, selected: entry.key === studyKey }, entry.key)),
      );
      if (!studies.some((entry) => entry.key === studyKey))
        study.prepend(h("option", { value: studyKey, selected: true }, studyKey));
    })
    .catch(() => {
      // the study list is a convenience here; the failures above say what went wrong
    });
}
