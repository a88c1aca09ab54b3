// @ts-check
// A study's participants through the data explorer (CASE's page/limit and Mongo-style filter):
// filtered by status, a flag and the start of the participant id, a page at a time; and one
// participant: state, assigned surveys, last submissions, recent responses, reports and rule
// failures. A panel the credential has no right for says so and the others still show.
import { ApiError, get, studyPath } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { count, instant } from "./format.js";
import { errorText } from "./task-progress.js";
import { studyHref, studyLink } from "./study-links.js";

/**
 * @typedef {import("./api-types.js").ParticipantState} ParticipantState
 * @typedef {import("./api-types.js").Pagination} Pagination
 * @typedef {import("./api-types.js").RuleFailure} RuleFailure
 * @typedef {import("./api-types.js").ExplorerReport} ExplorerReport
 */

/** CASE's statuses of a participant in a study. */
const STATUSES = ["active", "temporary", "virtual", "exited", "accountDeleted"];
const PAGE_SIZES = [10, 25, 50, 100];
/** The detail page shows the most recent few of each; the exports hold all of them. */
const RECENT = 10;

/**
 * The address of one participant's page.
 * @param {string} studyKey
 * @param {string} participantId
 */
export function participantHref(studyKey, participantId) {
  return `${studyHref(studyKey, "participants")}/${encodeURIComponent(participantId)}`;
}

/**
 * Unix seconds (CASE's participant times) as the console shows instants; "—" for 0 (never).
 * @param {number | null | undefined} seconds
 */
export function fromSeconds(seconds) {
  if (!seconds) return "—";
  return instant(new Date(seconds * 1_000).toISOString());
}

/**
 * The data explorer's filter for the form's choices. The id prefix is a range: every id that
 * starts with it sorts at or after it and before it followed by the highest character.
 * @param {{ status: string, flagKey: string, flagValue: string, idPrefix: string }} choices
 * @returns {Record<string, unknown> | null} null when nothing is chosen
 */
export function participantFilter({ status, flagKey, flagValue, idPrefix }) {
  /** @type {Record<string, unknown>} */
  const filter = {};
  if (status) filter["studyStatus"] = status;
  if (flagKey) filter[`flags.${flagKey}`] = flagValue === "" ? { $exists: true } : flagValue;
  if (idPrefix) filter["participantID"] = { $gte: idPrefix, $lt: `${idPrefix}\uffff` };
  return Object.keys(filter).length === 0 ? null : filter;
}

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {AbortSignal} signal
 */
export function renderParticipants(main, studyKey, signal) {
  /** @param {string} id @param {string} label @param {HTMLElement} control */
  const field = (id, label, control) => h("div", { className: "field" }, h("label", { for: id }, label), control);
  const status = h(
    "select",
    { id: "filter-status" },
    h("option", { value: "" }, "any status"),
    STATUSES.map((value) => h("option", { value }, value)),
  );
  const flagKey = h("input", { id: "filter-flag-key", type: "text", autocomplete: "off", placeholder: "e.g. consent" });
  const flagValue = h("input", {
    id: "filter-flag-value",
    type: "text",
    autocomplete: "off",
    placeholder: "any value",
  });
  const idPrefix = h("input", { id: "filter-id", type: "text", autocomplete: "off", spellcheck: "false" });
  const pageSize = h(
    "select",
    { id: "filter-limit" },
    PAGE_SIZES.map((size) => h("option", { value: String(size), selected: size === 25 }, String(size))),
  );
  const filters = h(
    "form",
    { className: "filters", "aria-label": "Filter the participants" },
    field("filter-status", "Status", status),
    field("filter-flag-key", "Flag", flagKey),
    field("filter-flag-value", "Flag value", flagValue),
    field("filter-id", "Participant ID starts with", idPrefix),
    field("filter-limit", "Per page", pageSize),
    h("div", { className: "field" }, h("button", { type: "submit" }, "Apply")),
  );
  const body = h("tbody");
  const table = h(
    "table",
    { className: "participants" },
    h("caption", {}, "Participants"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Participant ID", "Status", "Entered", "Last change", "Flags", "Assigned surveys"].map((label) =>
          h("th", { scope: "col" }, label),
        ),
      ),
    ),
    body,
  );
  const status_ = h("div", { "aria-live": "polite" });
  const previous = h("button", { type: "button", className: "secondary", disabled: true }, "Previous page");
  const next = h("button", { type: "button", className: "secondary", disabled: true }, "Next page");
  const pageText = h("span", { className: "page-text" });
  const pager = h("nav", { className: "pager", "aria-label": "Pages" }, previous, pageText, next);
  let page = 1;
  let totalPages = 0;

  const load = async () => {
    previous.disabled = true;
    next.disabled = true;
    const query = new URLSearchParams({ page: String(page), limit: pageSize.value });
    const filter = participantFilter({
      status: status.value,
      flagKey: flagKey.value.trim(),
      flagValue: flagValue.value,
      idPrefix: idPrefix.value.trim(),
    });
    if (filter) query.set("filter", JSON.stringify(filter));
    query.set("sort", JSON.stringify({ participantID: 1 }));
    replace(status_, h("p", { className: "muted" }, "Loading…"));
    try {
      const answer = /** @type {{ participants: ParticipantState[] | null, pagination: Pagination }} */ (
        await get(studyPath(studyKey, `/data-explorer/participants?${query.toString()}`), signal)
      );
      const rows = answer.participants ?? [];
      replace(
        body,
        rows.map((participant) => participantRow(studyKey, participant)),
      );
      totalPages = answer.pagination.totalPages;
      previous.disabled = page <= 1;
      next.disabled = page >= totalPages;
      pageText.textContent =
        totalPages === 0
          ? ""
          : `Page ${count(page)} of ${count(totalPages)} · ${count(answer.pagination.totalCount)} participants`;
      replace(
        status_,
        rows.length === 0
          ? notice(filter ? "No participant matches the filter." : "The study has no participants yet.")
          : null,
      );
    } catch (error) {
      if (signal.aborted) return;
      replace(body);
      pageText.textContent = "";
      replace(status_, notice(`The participants could not be read: ${errorText(error)}`, "error"));
    }
  };

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    page = 1;
    void load();
  });
  previous.addEventListener("click", () => {
    page = Math.max(1, page - 1);
    void load();
  });
  next.addEventListener("click", () => {
    page = Math.min(totalPages, page + 1);
    void load();
  });

  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Participants of ", h("code", {}, studyKey)),
    h(
      "p",
      {},
      "Participant states as the data explorer reads them. ",
      studyLink(studyKey, "exports", "Export them"),
      " for the whole study.",
    ),
    filters,
    table,
    status_,
    pager,
  );
  void load();
}

/**
 * @param {string} studyKey
 * @param {ParticipantState} participant
 */
function participantRow(studyKey, participant) {
  const flags = Object.entries(participant.flags ?? {});
  return h(
    "tr",
    { "data-participant-id": participant.participantId },
    h(
      "td",
      {},
      h("a", { href: participantHref(studyKey, participant.participantId) }, h("code", {}, participant.participantId)),
    ),
    h("td", {}, h("span", { className: `badge badge-${participant.studyStatus}` }, participant.studyStatus)),
    h("td", {}, fromSeconds(participant.enteredAt)),
    h("td", {}, fromSeconds(participant.modifiedAt)),
    h(
      "td",
      {},
      flags.length === 0
        ? h("span", { className: "muted" }, "none")
        : h(
            "ul",
            { className: "inline-list" },
            flags.map(([key, value]) => h("li", {}, h("code", {}, key), " = ", value)),
          ),
    ),
    h("td", { className: "number" }, count((participant.assignedSurveys ?? []).length)),
  );
}

/**
 * @param {HTMLElement} main
 * @param {string} studyKey
 * @param {string} participantId
 * @param {AbortSignal} signal
 */
export async function renderParticipant(main, studyKey, participantId, signal) {
  const state = h("div", {}, notice("Loading the participant…"));
  const responses = h("div", {}, "…");
  const reports = h("div", {}, "…");
  const failures = h("div", {}, "…");
  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Participant ", h("code", {}, participantId)),
    h("p", {}, studyLink(studyKey, "participants", "All participants of the study")),
    state,
    h("h2", {}, "Recent responses"),
    responses,
    h("h2", {}, "Recent reports"),
    reports,
    h("h2", {}, "Recent rule failures"),
    failures,
  );
  const byParticipant = encodeURIComponent(JSON.stringify({ participantID: participantId }));
  const newestReports = encodeURIComponent(JSON.stringify({ timestamp: -1 }));
  void fill(
    reports,
    signal,
    studyPath(studyKey, `/data-explorer/reports?limit=${RECENT}&sort=${newestReports}&filter=${byParticipant}`),
    (body) => reportTable(/** @type {{ reports: ExplorerReport[] | null }} */ (body).reports ?? []),
  );
  void fill(
    failures,
    signal,
    studyPath(studyKey, `/rule-failures?limit=${RECENT}&participantId=${encodeURIComponent(participantId)}`),
    (body) => failureList(studyKey, /** @type {{ ruleFailures: RuleFailure[] }} */ (body).ruleFailures),
  );
  /** @type {ParticipantState} */
  let participant;
  try {
    const answer = /** @type {{ participant: ParticipantState }} */ (
      await get(studyPath(studyKey, `/data-explorer/participants/${encodeURIComponent(participantId)}`), signal)
    );
    participant = answer.participant;
    replace(state, participantState(participant));
  } catch (error) {
    if (signal.aborted) return;
    replace(state, notice(`The participant could not be read: ${errorText(error)}`, "error"));
    replace(responses, h("p", { className: "muted" }, "not shown: the participant could not be read"));
    return;
  }
  // The data explorer reads one survey's responses at a time (as CASE's does): the surveys the
  // participant submitted or has assigned, each newest first, merged.
  const surveyKeys = [
    ...new Set([
      ...Object.keys(participant.lastSubmissions ?? {}),
      ...(participant.assignedSurveys ?? []).map((survey) => survey.surveyKey),
    ]),
  ];
  const newestFirst = encodeURIComponent(JSON.stringify({ submittedAt: -1 }));
  void fill(responses, signal, null, async () => {
    const pages = await Promise.all(
      surveyKeys.map(async (surveyKey) => {
        const query = `surveyKey=${encodeURIComponent(surveyKey)}&limit=${RECENT}&sort=${newestFirst}&filter=${byParticipant}`;
        const body = /** @type {{ responses: Record<string, unknown>[] | null }} */ (
          await get(studyPath(studyKey, `/data-explorer/responses?${query}`), signal)
        );
        return (body.responses ?? []).map((row) => /** @type {Record<string, unknown>} */ ({ ...row, surveyKey }));
      }),
    );
    const rows = pages
      .flat()
      .sort((a, b) => Number(b["submitted"] ?? 0) - Number(a["submitted"] ?? 0))
      .slice(0, RECENT);
    return responseTable(rows);
  });
}

/**
 * Reads one panel's data (from `path`, or as `render` reads it when path is null); a 403 becomes
 * a note that the credential lacks the right.
 * @param {Element} target
 * @param {AbortSignal} signal
 * @param {string | null} path
 * @param {(body: unknown) => Node | string | Promise<Node | string>} render
 */
async function fill(target, signal, path, render) {
  try {
    replace(target, await render(path === null ? null : await get(path, signal)));
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof ApiError && error.status === 403)
      replace(target, h("p", { className: "muted" }, `not shown: ${error.message}`));
    else replace(target, notice(errorText(error), "error"));
  }
}

/** @param {ParticipantState} participant */
function participantState(participant) {
  const flags = Object.entries(participant.flags ?? {});
  const linkingCodes = Object.keys(participant.linkingCodes ?? {});
  const assigned = participant.assignedSurveys ?? [];
  const submissions = Object.entries(participant.lastSubmissions ?? {}).sort(([, a], [, b]) => b - a);
  return h(
    "section",
    { className: "participant-state", "aria-labelledby": "state-title" },
    h("h2", { id: "state-title" }, "State"),
    details([
      ["Status", h("span", { className: `badge badge-${participant.studyStatus}` }, participant.studyStatus)],
      ["Entered", fromSeconds(participant.enteredAt)],
      ["Last change", fromSeconds(participant.modifiedAt)],
      ["Study session", participant.currentStudySession ? h("code", {}, participant.currentStudySession) : "—"],
      [
        "Flags",
        flags.length === 0
          ? h("span", { className: "muted" }, "none")
          : h(
              "ul",
              { className: "flag-list" },
              flags.map(([key, value]) => h("li", {}, h("code", {}, key), " = ", value)),
            ),
      ],
      // The codes themselves can identify a person elsewhere; their names are what a researcher needs here.
      [
        "Linking codes",
        linkingCodes.length === 0 ? h("span", { className: "muted" }, "none") : linkingCodes.join(", "),
      ],
      ["Messages scheduled", count((participant.messages ?? []).length)],
    ]),
    h("h3", {}, "Assigned surveys"),
    assigned.length === 0
      ? h("p", { className: "muted" }, "None assigned.")
      : h(
          "table",
          { className: "assigned-surveys" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Survey", "Category", "Valid from", "Valid until"].map((label) => h("th", { scope: "col" }, label)),
            ),
          ),
          h(
            "tbody",
            {},
            assigned.map((survey) =>
              h(
                "tr",
                {},
                h("td", {}, h("code", {}, survey.surveyKey)),
                h("td", {}, survey.category ?? ""),
                h("td", {}, survey.validFrom ? fromSeconds(survey.validFrom) : "any time"),
                h("td", {}, survey.validUntil ? fromSeconds(survey.validUntil) : "open"),
              ),
            ),
          ),
        ),
    h("h3", {}, "Last submissions"),
    submissions.length === 0
      ? h("p", { className: "muted" }, "Nothing submitted yet.")
      : h(
          "table",
          { className: "last-submissions" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Survey"), h("th", { scope: "col" }, "Submitted"))),
          h(
            "tbody",
            {},
            submissions.map(([surveyKey, at]) =>
              h("tr", {}, h("td", {}, h("code", {}, surveyKey)), h("td", {}, fromSeconds(at))),
            ),
          ),
        ),
  );
}

/**
 * The data explorer's responses are CASE's flattened export rows; the page shows their identity
 * and when they came in, the export has the answers.
 * @param {Record<string, unknown>[]} responses
 */
function responseTable(responses) {
  if (responses.length === 0) return h("p", { className: "muted" }, "No responses.");
  /**
   * The first of the named columns that holds a plain value, as text.
   * @param {Record<string, unknown>} row
   * @param {string[]} names
   */
  const pick = (row, names) => {
    for (const name of names) {
      const value = row[name];
      if (typeof value === "string" && value !== "") return value;
      if (typeof value === "number") return String(value);
    }
    return "—";
  };
  /** @param {string} value Unix seconds, or a date-time as text */
  const when = (value) => (/^\d+$/.test(value) ? fromSeconds(Number(value)) : value);
  return h(
    "table",
    { className: "responses" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Submitted", "Survey", "Version", "Response ID"].map((label) => h("th", { scope: "col" }, label)),
      ),
    ),
    h(
      "tbody",
      {},
      responses.map((row) =>
        h(
          "tr",
          {},
          h("td", {}, when(pick(row, ["submitted", "submittedAt", "arrivedAt"]))),
          h("td", {}, h("code", {}, pick(row, ["surveyKey", "key"]))),
          h("td", {}, pick(row, ["version", "versionID", "versionId"])),
          h("td", {}, h("code", {}, pick(row, ["ID", "id"]))),
        ),
      ),
    ),
  );
}

/** @param {ExplorerReport[]} reports */
function reportTable(reports) {
  if (reports.length === 0) return h("p", { className: "muted" }, "No reports.");
  return h(
    "table",
    { className: "reports" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Time", "Report", "Data"].map((label) => h("th", { scope: "col" }, label)),
      ),
    ),
    h(
      "tbody",
      {},
      reports.map((report) =>
        h(
          "tr",
          {},
          h("td", {}, fromSeconds(report.timestamp)),
          h("td", {}, h("code", {}, report.key)),
          h(
            "td",
            {},
            h(
              "ul",
              { className: "inline-list" },
              (report.data ?? []).map((entry) => h("li", {}, h("code", {}, entry.key), " = ", entry.value)),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * @param {string} studyKey
 * @param {RuleFailure[]} failures
 */
function failureList(studyKey, failures) {
  if (failures.length === 0) return h("p", { className: "muted" }, "None recorded.");
  return h(
    "ul",
    { className: "recent-failures" },
    failures.map((failure) =>
      h(
        "li",
        {},
        h("time", { datetime: failure.occurredAt }, instant(failure.occurredAt)),
        ` · ${failure.eventType}${failure.eventKey ? ` ${failure.eventKey}` : ""} · rule ${failure.ruleIndex} at `,
        h("code", {}, failure.path),
        `: ${failure.message}`,
      ),
    ),
    h("li", { className: "more" }, studyLink(studyKey, "failures", "All rule failures of the study")),
  );
}
