// @ts-check
// Signing in: a management token or a service key, checked against the API before it is kept.
import { ApiError, call } from "./api.js";
import { h, notice, replace } from "./dom.js";
import { saveCredential } from "./session.js";

/**
 * @param {HTMLElement} main
 * @param {{ onSignedIn: () => void, reason?: string }} options
 */
export function renderSignIn(main, { onSignedIn, reason }) {
  const outcome = h("div", { "aria-live": "polite" });
  const secret = h("input", {
    id: "credential",
    name: "credential",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "credential-help",
  });
  /** @param {string} value @param {string} label @param {string} help */
  const kindOption = (value, label, help) =>
    h(
      "div",
      { className: "choice" },
      h("input", { type: "radio", name: "kind", id: `kind-${value}`, value, checked: value === "bearer" }),
      h("label", { for: `kind-${value}` }, label, h("span", { className: "hint" }, ` ${help}`)),
    );
  const button = h("button", { type: "submit" }, "Sign in");
  // Where a credential comes from, and what is not there yet.
  const sources = h(
    "div",
    { id: "credential-sources", className: "sign-in hint" },
    h(
      "p",
      {},
      "No token yet? An operator mints one where studyflow runs: ",
      h("code", {}, "npm run -s cli -- token:management --subject <name>"),
      " (",
      h("code", {}, "--admin"),
      " for every study; valid for an hour, ",
      h("code", {}, "--ttl <seconds>"),
      " to change that; in the Docker image ",
      h("code", {}, "node dist/cli/main.js token:management …"),
      "). A service key comes from ",
      h("code", {}, "service-key:create --subject <name>"),
      ".",
    ),
    h("p", {}, "Signing in with your organisation's account (its OpenID Connect provider) is not available here yet."),
  );
  const form = h(
    "form",
    { className: "sign-in", "aria-labelledby": "page-title" },
    h(
      "fieldset",
      {},
      h("legend", {}, "Credential"),
      kindOption("bearer", "Management token", "(a JWT, sent as Authorization: Bearer)"),
      kindOption("api-key", "Service key", "(sf_…, sent as X-API-Key)"),
    ),
    h("label", { for: "credential" }, "Token or key"),
    secret,
    h(
      "p",
      { id: "credential-help", className: "hint" },
      "Kept in this tab only (session storage) until you sign out or close it. What the console shows follows its permissions.",
    ),
    button,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const checked = form.querySelector('input[name="kind"]:checked');
    const kind = checked instanceof HTMLInputElement && checked.value === "api-key" ? "api-key" : "bearer";
    const value = secret.value.trim();
    if (value === "") return;
    button.disabled = true;
    replace(outcome, notice("Checking the credential…"));
    /** @type {import("./session.js").Credential} */
    const credential = { kind, value };
    // Kept only once the API has taken it.
    call("GET", "/v1/studies", { credential })
      .then(() => {
        secret.value = "";
        saveCredential(credential);
        onSignedIn();
      })
      .catch((/** @type {unknown} */ error) => {
        const text = error instanceof ApiError ? error.message : "the API could not be reached";
        replace(outcome, notice(`Not signed in: ${text}`, "error"));
        secret.focus();
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  replace(
    main,
    h("h1", { id: "page-title", tabindex: "-1" }, "Sign in"),
    reason ? notice(reason, "error") : null,
    form,
    outcome,
    sources,
  );
  secret.focus();
}
