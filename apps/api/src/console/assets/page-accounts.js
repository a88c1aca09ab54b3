// @ts-check
// Participant accounts for operators (admin tokens): one found by its e-mail address, its state
// (created, confirmed, locked, last sign-in, profiles, deletion), and lock, unlock, sign out
// everywhere and delete, each after a confirmation step. A deletion under way is followed until
// the worker has taken every participant out. Refusals (403 for a non-admin token, 409 …) read
// as the API's message.
import { ApiError, call, get } from "./api.js";
import { details, h, notice, replace } from "./dom.js";
import { count, instant, percent } from "./format.js";
import { errorText } from "./task-progress.js";

/**
 * @typedef {object} AccountDeletion
 * @property {string} id
 * @property {string} userId
 * @property {"pending" | "running" | "done" | "failed"} status
 * @property {number} participantsDone
 * @property {number} [participantsTotal]
 * @property {string | null} error
 * @property {string} createdAt
 * @property {string | null} finishedAt
 *
 * @typedef {object} ParticipantAccount
 * @property {string} id
 * @property {string} email
 * @property {string} createdAt
 * @property {string | null} confirmedAt
 * @property {string | null} lockedAt
 * @property {string | null} lastLoginAt
 * @property {string | null} deletionRequestedAt
 * @property {number} profileCount
 * @property {AccountDeletion | null} deletion
 */

const ACCOUNTS = "/v1/participant-users";
/** How often a deletion under way is read again: a participant takes well under a second. */
const FOLLOW_EVERY_MS = 1_000;

/** @param {string} userId @param {string} [rest] */
const accountPath = (userId, rest = "") => `${ACCOUNTS}/${encodeURIComponent(userId)}${rest}`;

/**
 * A refusal as someone reads it: the API's own message (it says why), marked as a refusal when
 * the token may not do this (403) or the account's state forbids it (409).
 * @param {unknown} error
 */
export function refusalText(error) {
  if (!(error instanceof ApiError)) return errorText(error);
  if (error.status === 403 || error.status === 409) return `Refused: ${error.message.replace(/\.$/, "")}.`;
  return error.message;
}

/** @param {AccountDeletion["status"]} status */
function deletionStatusText(status) {
  return { pending: "queued", running: "running", done: "done", failed: "failed (retried)" }[status];
}

/**
 * @param {HTMLElement} main
 * @param {AbortSignal} signal
 */
export function renderAccounts(main, signal) {
  const email = h("input", {
    id: "account-email",
    type: "email",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "someone@example.org",
  });
  const form = h(
    "form",
    { className: "filters", "aria-label": "Find an account" },
    h("div", { className: "field" }, h("label", { for: "account-email" }, "E-mail address"), email),
    h("div", { className: "field" }, h("button", { type: "submit" }, "Find")),
  );
  const result = h("div", { "aria-live": "polite", id: "account-result" });
  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Participant accounts"),
    h(
      "p",
      { className: "muted" },
      "Find an account by its e-mail address to see its state, lock or unlock it, sign it out everywhere or delete it. Admin tokens only; every action is audited.",
    ),
    form,
    result,
  );

  /** Ends the follow-up of the account shown before (a new search or leaving the page). */
  let stopShown = () => {};

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const address = email.value.trim();
    if (address === "") return;
    stopShown();
    replace(result, h("p", { className: "muted" }, "Looking…"));
    get(`${ACCOUNTS}?${new URLSearchParams({ email: address }).toString()}`, signal).then(
      (answer) => {
        stopShown = showAccount(result, /** @type {{ account: ParticipantAccount }} */ (answer).account, signal);
      },
      (/** @type {unknown} */ error) => {
        if (signal.aborted) return;
        const text =
          error instanceof ApiError && error.status === 404 ? "No account has this address." : refusalText(error);
        replace(result, notice(text, error instanceof ApiError && error.status === 404 ? "note" : "error"));
      },
    );
  });
}

/**
 * Shows one account and its actions; returns what stops its deletion's follow-up.
 * @param {HTMLElement} container
 * @param {ParticipantAccount} initial
 * @param {AbortSignal} pageSignal
 * @returns {() => void}
 */
function showAccount(container, initial, pageSignal) {
  const controller = new AbortController();
  const stop = () => controller.abort();
  pageSignal.addEventListener("abort", stop, { once: true });
  const signal = controller.signal;

  let account = initial;
  const facts = h("div");
  const actions = h("div", { className: "actions account-actions" });
  const confirmation = h("div");
  const message = h("div", { "aria-live": "polite", className: "account-message" });
  const progress = h("div");
  replace(
    container,
    h(
      "section",
      { className: "failure-detail account", "aria-labelledby": "account-heading", "data-account-id": account.id },
      h("h2", { id: "account-heading" }, account.email),
      facts,
      actions,
      confirmation,
      message,
      progress,
    ),
  );

  const drawFacts = () => {
    const deletion = account.deletion;
    replace(
      facts,
      details([
        ["Account ID", h("code", {}, account.id)],
        ["Created", instant(account.createdAt)],
        ["Confirmed", account.confirmedAt ? instant(account.confirmedAt) : "not yet"],
        ["Locked", account.lockedAt ? instant(account.lockedAt) : "no"],
        ["Last sign-in", account.lastLoginAt ? instant(account.lastLoginAt) : "never"],
        ["Profiles", count(account.profileCount)],
        [
          "Deletion",
          deletion
            ? `${deletionStatusText(deletion.status)}, requested ${instant(deletion.createdAt)}`
            : account.deletionRequestedAt
              ? `requested ${instant(account.deletionRequestedAt)}`
              : "none",
        ],
      ]),
    );
  };

  /** @param {string} text @param {"error" | "note"} [kind] */
  const say = (text, kind = "note") => replace(message, notice(text, kind));

  /**
   * One action's confirmation step: what it does, and a button that does it.
   * @param {string} question
   * @param {string} confirmLabel
   * @param {() => Promise<void>} act
   * @param {HTMLInputElement} [typed] an input whose value must be the account's address
   */
  const confirmStep = (question, confirmLabel, act, typed) => {
    const confirm = h("button", { type: "submit", className: "danger" }, confirmLabel);
    const cancel = h("button", { type: "button", className: "secondary" }, "Cancel");
    const panel = h(
      "form",
      { className: "confirmation", role: "group", "aria-label": "Confirm" },
      h("p", {}, question),
      typed
        ? h(
            "div",
            { className: "field" },
            h("label", { for: typed.id }, "Type the account's e-mail address to confirm"),
            " ",
            typed,
          )
        : null,
      h("p", { className: "actions" }, confirm, " ", cancel),
    );
    cancel.addEventListener("click", () => replace(confirmation));
    panel.addEventListener("submit", (event) => {
      event.preventDefault();
      if (typed && typed.value.trim().toLowerCase() !== account.email.toLowerCase()) {
        say("The address typed is not this account's; nothing was done.", "error");
        return;
      }
      confirm.disabled = true;
      cancel.disabled = true;
      act().then(
        () => replace(confirmation),
        (/** @type {unknown} */ error) => {
          replace(confirmation);
          if (!signal.aborted) say(refusalText(error), "error");
        },
      );
    });
    replace(message);
    replace(confirmation, panel);
    (typed ?? confirm).focus();
  };

  /** @param {string} path */
  const post = async (path) => call("POST", path, { signal });

  const drawActions = () => {
    const deleting = account.deletion !== null || account.deletionRequestedAt !== null;
    /** @param {string} label @param {() => void} onclick @param {string} [className] */
    const button = (label, onclick, className = "secondary") =>
      h("button", { type: "button", className, onclick, disabled: deleting && label !== "Sign out everywhere" }, label);
    replace(
      actions,
      account.lockedAt
        ? button("Unlock", () =>
            confirmStep(`Unlock ${account.email}? The account can sign in again.`, "Unlock the account", async () => {
              const answer = /** @type {{ account: ParticipantAccount }} */ (
                await post(accountPath(account.id, "/unlock"))
              );
              account = answer.account;
              redraw();
              say("Unlocked: the account can sign in again.");
            }),
          )
        : button("Lock", () =>
            confirmStep(
              `Lock ${account.email}? No sign-in and no token renewal until it is unlocked; every session ends now.`,
              "Lock the account",
              async () => {
                const answer = /** @type {{ account: ParticipantAccount }} */ (
                  await post(accountPath(account.id, "/lock"))
                );
                account = answer.account;
                redraw();
                say("Locked: every session ended, and no sign-in until it is unlocked.");
              },
            ),
          ),
      " ",
      button("Sign out everywhere", () =>
        confirmStep(
          `Sign ${account.email} out everywhere? Every session and access token stops working now; the participant can sign in again.`,
          "Sign out everywhere",
          async () => {
            const answer = /** @type {{ sessionsEnded: number }} */ (await post(accountPath(account.id, "/sign-out")));
            say(`Signed out everywhere: ${count(answer.sessionsEnded)} open session(s) ended.`);
          },
        ),
      ),
      " ",
      button(
        "Delete the account…",
        () =>
          confirmStep(
            `Delete ${account.email}? Every participant of its ${count(account.profileCount)} profile(s) leaves every study, the account and its sign-in go, and the participant is mailed a confirmation. This cannot be undone.`,
            "Delete the account",
            async () => {
              const answer = /** @type {{ deletion: AccountDeletion }} */ (
                await call("DELETE", accountPath(account.id), { signal })
              );
              account = { ...account, deletion: answer.deletion, deletionRequestedAt: answer.deletion.createdAt };
              redraw();
              say("Deletion queued: the worker takes the participants out one by one.");
              void follow(answer.deletion);
            },
            h("input", { id: "confirm-email", type: "email", autocomplete: "off", spellcheck: "false" }),
          ),
        "danger",
      ),
    );
  };

  const redraw = () => {
    drawFacts();
    drawActions();
  };

  /** @param {AccountDeletion} deletion */
  const drawProgress = (deletion) => {
    const total = deletion.participantsTotal ?? deletion.participantsDone;
    const bar = h("progress", { id: "deletion-progress", max: 1, value: 0 });
    if (deletion.status === "done") bar.value = 1;
    else if (total > 0) bar.value = deletion.participantsDone / total;
    replace(
      progress,
      h(
        "section",
        { className: "task-progress", "aria-labelledby": "deletion-heading", "data-deletion-id": deletion.id },
        h("h3", { id: "deletion-heading" }, "Deletion"),
        h("label", { for: "deletion-progress" }, "Progress"),
        bar,
        h(
          "p",
          { className: "progress-text", role: "status" },
          h("span", { className: `status status-${deletion.status === "done" ? "completed" : deletion.status}` }, [
            deletionStatusText(deletion.status),
          ]),
          ` · ${count(deletion.participantsDone)} / ${count(total)} participants`,
          total > 0 && deletion.status !== "done" ? ` (${percent(deletion.participantsDone, total)} %)` : "",
          deletion.finishedAt ? ` · finished ${instant(deletion.finishedAt)}` : "",
        ),
        deletion.error ? notice(`Last error: ${deletion.error}`, "error") : null,
        deletion.status === "done" ? notice("The account is deleted: it no longer exists.") : null,
      ),
    );
  };

  /**
   * Reads the deletion until it is done (or the page is left); a failed run is retried by the
   * worker, so following goes on.
   * @param {AccountDeletion} first
   */
  const follow = async (first) => {
    let deletion = first;
    drawProgress(deletion);
    while (deletion.status !== "done" && !signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
      if (signal.aborted) return;
      try {
        const answer = /** @type {{ deletion: AccountDeletion }} */ (
          await get(`${ACCOUNTS}/deletions/${encodeURIComponent(deletion.id)}`, signal)
        );
        deletion = answer.deletion;
        account = { ...account, deletion };
        drawFacts();
      } catch (error) {
        if (signal.aborted) return;
        say(`Could not read the deletion's progress: ${refusalText(error)}`, "error");
        return;
      }
      drawProgress(deletion);
    }
    if (deletion.status === "done") replace(actions);
  };

  redraw();
  if (account.deletion) void follow(account.deletion);
  return stop;
}
