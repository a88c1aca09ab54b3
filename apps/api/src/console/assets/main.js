// @ts-check
// The console's entry: sign-in (at the organisation's provider, or a pasted credential), the page
// header, and the pages, chosen by the address's fragment (#/studies, #/studies/{key}/run, …/tasks,
// …/tasks/{id}, …/failures, …/participants[/{id}], …/exports), #/accounts (participant
// accounts, admins) and #/mails (participant mails and their templates). Leaving a page stops its
// requests and event streams.
import { whenUnauthorized } from "./api.js";
import { h, replace } from "./dom.js";
import { renderAccounts } from "./page-accounts.js";
import { renderExports } from "./page-exports.js";
import { renderFailures } from "./page-failures.js";
import { renderMailTemplates } from "./page-mail-templates.js";
import { renderParticipant, renderParticipants } from "./page-participants.js";
import { renderRun } from "./page-run.js";
import { renderSignIn } from "./page-sign-in.js";
import { renderStudies } from "./page-studies.js";
import { renderTask, renderTasks } from "./page-tasks.js";
import {
  clearCredential,
  describeCredential,
  loadCredential,
  loadProviderSession,
  signOutOfProvider,
} from "./session.js";
import { studyHref } from "./study-links.js";

/**
 * @typedef {{ name: "studies" } | { name: "accounts" } | { name: "mails" } | { name: "run" | "tasks" | "failures" | "participants" | "exports", studyKey: string } |
 *   { name: "task", studyKey: string, taskId: string } |
 *   { name: "participant", studyKey: string, participantId: string } | { name: "unknown" }} Route
 */

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const nav = /** @type {HTMLElement} */ (document.getElementById("site-nav"));
const who = /** @type {HTMLElement} */ (document.getElementById("who"));

/** Ends the current page: aborts its requests and streams. */
let leave = () => {};

/**
 * @param {string} hash
 * @returns {Route}
 */
function routeOf(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/");
  if (parts[0] === "" || (parts[0] === "studies" && parts.length === 1)) return { name: "studies" };
  if (parts[0] === "accounts" && parts.length === 1) return { name: "accounts" };
  if (parts[0] === "mails" && parts.length === 1) return { name: "mails" };
  if (parts[0] !== "studies" || parts[1] === undefined || parts[1] === "") return { name: "unknown" };
  let studyKey;
  try {
    studyKey = decodeURIComponent(parts[1]);
  } catch {
    return { name: "unknown" };
  }
  const page = parts[2];
  if (
    parts.length === 3 &&
    (page === "run" || page === "tasks" || page === "failures" || page === "participants" || page === "exports")
  )
    return { name: page, studyKey };
  if (parts.length === 4 && page === "participants" && parts[3]) {
    try {
      return { name: "participant", studyKey, participantId: decodeURIComponent(parts[3]) };
    } catch {
      return { name: "unknown" };
    }
  }
  if (parts.length === 4 && page === "tasks" && parts[3]) {
    try {
      return { name: "task", studyKey, taskId: decodeURIComponent(parts[3]) };
    } catch {
      return { name: "unknown" };
    }
  }
  return { name: "unknown" };
}

/** @param {Route} route */
function renderNav(route) {
  /** @param {string} href @param {string} text @param {boolean} current */
  const link = (href, text, current) => h("a", { href, "aria-current": current ? "page" : null }, text);
  const items = [
    link("#/studies", "Studies", route.name === "studies"),
    link("#/accounts", "Accounts", route.name === "accounts"),
    link("#/mails", "Participant mails", route.name === "mails"),
  ];
  if ("studyKey" in route) {
    const { studyKey } = route;
    items.push(
      link(studyHref(studyKey, "run"), "Run actions", route.name === "run"),
      link(studyHref(studyKey, "tasks"), "Tasks", route.name === "tasks" || route.name === "task"),
      link(studyHref(studyKey, "failures"), "Rule failures", route.name === "failures"),
      link(
        studyHref(studyKey, "participants"),
        "Participants",
        route.name === "participants" || route.name === "participant",
      ),
      link(studyHref(studyKey, "exports"), "Exports", route.name === "exports"),
    );
  }
  replace(
    nav,
    h(
      "ul",
      {},
      items.map((item) => h("li", {}, item)),
    ),
  );
}

/** @param {string} [reason] */
function showSignIn(reason) {
  leave();
  replace(nav);
  replace(who);
  document.title = "Sign in · studyflow console";
  renderSignIn(main, { onSignedIn: render, ...(reason ? { reason } : {}) });
}

function render() {
  leave();
  const credential = loadCredential();
  if (!credential) {
    showSignIn();
    return;
  }
  const controller = new AbortController();
  /** @type {(() => void)[]} */
  const stops = [];
  leave = () => {
    controller.abort();
    for (const stop of stops.splice(0)) stop();
    leave = () => {};
  };
  /** @param {() => void} stop */
  const onLeave = (stop) => stops.push(stop);
  const signal = controller.signal;

  const subject = describeCredential(credential);
  replace(
    who,
    h("span", {}, "Signed in as ", h("strong", {}, subject)),
    " ",
    h(
      "button",
      {
        type: "button",
        className: "secondary",
        onclick: () => {
          // A provider session ends at the API too (its row and cookie); a pasted credential is only forgotten.
          const signOut = credential.kind === "session" ? signOutOfProvider(credential) : Promise.resolve();
          void signOut.then(() => {
            clearCredential();
            showSignIn();
          });
        },
      },
      "Sign out",
    ),
  );

  const route = routeOf(location.hash);
  renderNav(route);
  switch (route.name) {
    case "studies":
      void renderStudies(main, signal, subject);
      break;
    case "accounts":
      renderAccounts(main, signal);
      break;
    case "mails":
      renderMailTemplates(main, signal);
      break;
    case "run":
      renderRun(main, route.studyKey, onLeave);
      break;
    case "tasks":
      renderTasks(main, route.studyKey, signal);
      break;
    case "task":
      void renderTask(main, route.studyKey, route.taskId, signal, onLeave);
      break;
    case "failures":
      renderFailures(main, route.studyKey, signal);
      break;
    case "participants":
      renderParticipants(main, route.studyKey, signal);
      break;
    case "participant":
      void renderParticipant(main, route.studyKey, route.participantId, signal);
      break;
    case "exports":
      renderExports(main, route.studyKey, signal, onLeave);
      break;
    case "unknown":
      replace(
        main,
        h("h1", { id: "page-title", tabindex: "-1" }, "No such page"),
        h("p", {}, h("a", { href: "#/studies" }, "Go to the studies")),
      );
      break;
  }
  const title = document.getElementById("page-title");
  document.title = `${title?.textContent ?? "studyflow"} · studyflow console`;
  if (document.activeElement === document.body || document.activeElement === null) title?.focus();
}

whenUnauthorized((error) => {
  if (!loadCredential()) return;
  clearCredential();
  showSignIn(`Signed out: ${error.message}.`);
});

// The skip link would otherwise change the fragment, which names the page.
document.querySelector(".skip-link")?.addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener("hashchange", () => {
  render();
  document.getElementById("page-title")?.focus();
});
// A sign-in at the organisation's provider comes back to this page with its session cookie: ask
// the API who it signs in before the first page (a pasted credential in this tab still comes first).
void loadProviderSession().then(render);
