// @ts-check
// The studies the credential may see, each with its participants by status, rules version,
// timer, task retention and most recent rule failures, and links to its pages. A panel the credential has no
// right for says so.
import { ApiError, get, studyPath } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { count, instant } from "./format.js";
import { studyLink } from "./study-links.js";

/**
 * A study's name in English, else in its first language, else its key (CASE LocalisedObjects).
 * @param {Study} study
 */
function studyName(study) {
  const texts = study.props.name.map((item) => ({
    code: item.code,
    text: item.parts.map((part) => part.str).join(""),
  }));
  return (texts.find((item) => item.code === "en") ?? texts[0])?.text || study.key;
}

/**
 * @typedef {import("./api-types.js").Study} Study
 * @typedef {import("./api-types.js").StudyTimer} StudyTimer
 * @typedef {import("./api-types.js").RuleFailure} RuleFailure
 * @typedef {import("./api-types.js").ParticipantCounts} ParticipantCounts
 */

/**
 * GET /v1/studies/{studyKey}/task-retention: days finished tasks are kept (0: forever); null: the default.
 * @typedef {object} TaskRetention
 * @property {number | null} days
 * @property {number | null} timerDays
 * @property {number} effectiveDays
 * @property {number} effectiveTimerDays
 */

/** A glance, not the list: the rule-failures page has them all. */
const RECENT_FAILURES = 3;

/**
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 * @param {string} who
 */
export async function renderStudies(main, signal, who) {
  const intro = h("p", {}, "Loading the studies…");
  const list = h("ul", { className: "study-list" });
  replace(main, h("h1", { id: "page-title", tabindex: "-1" }, "Studies"), intro, list);
  let studies;
  try {
    studies = /** @type {{ studies: Study[] }} */ (await get("/v1/studies", signal)).studies;
  } catch (error) {
    if (!signal.aborted) replace(intro, notice(`The studies could not be read: ${message(error)}`, "error"));
    return;
  }
  if (studies.length === 0) {
    replace(intro, notice(`${who} may see no studies: there is nothing to show.`));
    return;
  }
  intro.textContent = `${count(studies.length)} ${studies.length === 1 ? "study" : "studies"} visible to ${who}.`;
  studies.forEach((study, index) => list.append(studyCard(study, index, signal)));
}

/**
 * @param {Study} study
 * @param {number} index
 * @param {AbortSignal} signal
 */
function studyCard(study, index, signal) {
  const counts = h("dd", {}, "…");
  const timer = h("dd", {}, "…");
  const retention = h("dd", {}, "…");
  const failures = h("div", {}, "…");
  const headingId = `study-${index}`;
  const card = h(
    "li",
    { className: "study-card", "data-study-key": study.key },
    h(
      "h2",
      { id: headingId },
      studyName(study),
      " ",
      h("code", { className: "study-key" }, study.key),
      " ",
      h("span", { className: `badge badge-${study.status}` }, study.status),
    ),
    h(
      "dl",
      { className: "facts" },
      h("dt", {}, "Rules version"),
      h("dd", {}, study.currentRulesVersion === null ? "no rules yet" : `version ${study.currentRulesVersion}`),
      h("dt", {}, "Participants"),
      counts,
      h("dt", {}, "Timer"),
      timer,
      h("dt", {}, "Finished tasks kept"),
      retention,
    ),
    h("h3", {}, "Recent rule failures"),
    failures,
    h(
      "nav",
      { className: "study-actions", "aria-labelledby": headingId },
      studyLink(study.key, "run", "Run actions"),
      studyLink(study.key, "tasks", "Tasks"),
      studyLink(study.key, "participants", "Participants"),
      studyLink(study.key, "exports", "Exports"),
      studyLink(study.key, "failures", "Rule failures"),
    ),
  );
  void fill(counts, signal, studyPath(study.key, "/participant-counts"), (body) =>
    participantCounts(/** @type {{ participantCounts: ParticipantCounts }} */ (body).participantCounts),
  );
  void fill(timer, signal, studyPath(study.key, "/timer"), (body) =>
    timerState(/** @type {{ timer: StudyTimer }} */ (body).timer),
  );
  void fill(retention, signal, studyPath(study.key, "/task-retention"), (body) =>
    taskRetention(/** @type {{ taskRetention: TaskRetention }} */ (body).taskRetention),
  );
  void fill(failures, signal, studyPath(study.key, `/rule-failures?limit=${RECENT_FAILURES}`), (body) =>
    recentFailures(study.key, /** @type {{ ruleFailures: RuleFailure[] }} */ (body).ruleFailures),
  );
  return card;
}

/**
 * Reads one panel's data; a 403 becomes a note that the credential lacks the right.
 * @param {Element} target
 * @param {AbortSignal} signal
 * @param {string} path
 * @param {(body: unknown) => Node | string} render
 */
async function fill(target, signal, path, render) {
  try {
    replace(target, render(await get(path, signal)));
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 403)
      replace(target, h("span", { className: "muted" }, `not shown: ${error.message}`));
    else replace(target, notice(message(error), "error"));
  }
}

/** @param {ParticipantCounts} counts */
function participantCounts(counts) {
  const entries = Object.entries(counts.byStatus);
  if (entries.length === 0) return "none yet";
  return h(
    "span",
    {},
    h(
      "ul",
      { className: "inline-list" },
      entries.map(([status, n]) => h("li", {}, `${status} ${count(n)}`)),
    ),
    ` (total ${count(counts.total)})`,
  );
}

/** @param {StudyTimer} timer */
function timerState(timer) {
  const state = timer.paused
    ? "paused"
    : !timer.studyActive
      ? "off (the study is inactive)"
      : !timer.handlesTimer
        ? "off (no rule handles TIMER)"
        : "running";
  return details(
    [
      ["State", state],
      ["Next tick", timer.nextTickAt ? instant(timer.nextTickAt) : "none"],
      [
        "Last tick",
        timer.lastTick ? `${instant(timer.lastTick.task.createdAt)} (${timer.lastTick.task.status})` : "none yet",
      ],
    ],
    "facts compact",
  );
}

/** @param {TaskRetention} retention */
function taskRetention(retention) {
  /**
   * @param {number} effective
   * @param {number | null} own
   */
  const kept = (effective, own) =>
    `${effective === 0 ? "forever" : `${count(effective)} ${effective === 1 ? "day" : "days"}`}${own === null ? " (default)" : ""}`;
  return details(
    [
      ["Runs and exports", kept(retention.effectiveDays, retention.days)],
      ["Timer ticks", kept(retention.effectiveTimerDays, retention.timerDays)],
    ],
    "facts compact",
  );
}

/**
 * @param {string} studyKey
 * @param {RuleFailure[]} failures
 */
function recentFailures(studyKey, failures) {
  if (failures.length === 0) return h("p", { className: "muted" }, "None recorded.");
  return h(
    "ul",
    { className: "recent-failures" },
    failures.map((failure) =>
      h(
        "li",
        {},
        h("time", { datetime: failure.occurredAt }, instant(failure.occurredAt)),
        ` · ${failure.eventType} · rule ${failure.ruleIndex} at `,
        h("code", {}, failure.path),
        `: ${failure.message}`,
      ),
    ),
    h("li", { className: "more" }, studyLink(studyKey, "failures", "All rule failures")),
  );
}

/** @param {unknown} error */
function message(error) {
  return error instanceof Error ? error.message : "something went wrong";
}
