// @ts-check
// The mails studyflow sends to participants, by CASE's message type, and whether the instance has
// a global e-mail template of each (edited in case-admin's messaging pages) and in which
// languages. A type without one goes out as studyflow's built-in mail (English or German), which
// a study in another language should not be left with.
import { ApiError, get } from "./api.js";
import { h, notice, replace } from "./dom.js";
import { errorText } from "./task-progress.js";

/**
 * @typedef {object} ParticipantMailType
 * @property {string} messageType
 * @property {string | null} sentWhen
 * @property {string[]} keys
 * @property {boolean} [studyflowOnly]
 * @property {{ defaultLanguage: string, languages: string[] } | null} template
 */

/** @param {ParticipantMailType} type */
function row(type) {
  const languages = type.template
    ? type.template.languages
        .map((lang) => (lang === type.template?.defaultLanguage ? `${lang} (default)` : lang))
        .join(", ")
    : "";
  return h(
    "tr",
    { "data-type": type.messageType },
    h("th", { scope: "row" }, h("code", {}, type.messageType), type.studyflowOnly ? " (studyflow's own)" : ""),
    h("td", {}, type.sentWhen ?? "never sent by studyflow"),
    h("td", { className: "template" }, type.template ? "yes" : "no: built-in mail"),
    h("td", { className: "languages" }, languages),
    h("td", {}, type.keys.length === 0 ? "" : type.keys.map((key) => `.${key}`).join(" ")),
  );
}

/**
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 */
export function renderMailTemplates(main, signal) {
  const result = h("div", { "aria-live": "polite" }, h("p", { className: "muted" }, "Loading…"));
  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Participant mails"),
    h(
      "p",
      { className: "muted" },
      "Each mail to a participant is written with the instance's global e-mail template of its type (case-admin: Messaging, global e-mail templates), in the participant's language, else the template's default. A type without a template gets studyflow's built-in mail in English or German. Templates also get .language.",
    ),
    result,
  );
  get("/v1/messaging/participant-mail-types", signal).then(
    (answer) => {
      const types = /** @type {{ types: ParticipantMailType[] }} */ (answer).types;
      const missing = types.filter((type) => type.sentWhen !== null && !type.template).length;
      replace(
        result,
        notice(
          missing === 0
            ? "Every mail studyflow sends has a template."
            : `${missing} of the mails studyflow sends have no template and go out as the built-in mail.`,
          missing === 0 ? "note" : "error",
        ),
        h(
          "table",
          { id: "mail-types" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "Message type"),
              h("th", { scope: "col" }, "Sent"),
              h("th", { scope: "col" }, "Template"),
              h("th", { scope: "col" }, "Languages"),
              h("th", { scope: "col" }, "Values"),
            ),
          ),
          h("tbody", {}, ...types.map(row)),
        ),
      );
    },
    (/** @type {unknown} */ error) => {
      if (signal.aborted) return;
      const text =
        error instanceof ApiError && error.status === 403
          ? `Refused: ${error.message.replace(/\.$/, "")}.`
          : errorText(error);
      replace(result, notice(text, "error"));
    },
  );
}
