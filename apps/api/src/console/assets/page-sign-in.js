// @ts-check
// Signing in: with the organisation's account at its OpenID provider when one is configured (a
// link to /console/oidc/login, which comes back here signed in), or with a management token or a
// service key pasted by an operator, checked against the API before it is kept.
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
  );
  const noProvider = h(
    "p",
    { id: "no-provider" },
    "Signing in with your organisation's account (its OpenID Connect provider) needs the provider set up where studyflow runs (the ",
    h("code", {}, "CONSOLE_OIDC_*"),
    " settings).",
  );
  sources.append(noProvider);
  // Filled when the API says a provider is configured; the token paste below stays for operators.
  const provider = h("section", { id: "provider-sign-in", className: "sign-in", hidden: true });
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
    provider,
    form,
    outcome,
    sources,
  );
  secret.focus();
  void showProvider(provider, noProvider);
}

/**
 * Shows "Sign in with <provider>" when the API has one configured (GET /console/oidc/config).
 * @param {HTMLElement} section
 * @param {HTMLElement} noProvider the note saying there is none, removed when there is
 */
async function showProvider(section, noProvider) {
  let config;
  try {
    const response = await fetch("/console/oidc/config", {
      headers: { Accept: "application/json" },
      cache: "no-store",
      credentials: "omit",
    });
    if (!response.ok) return;
    const body = /** @type {unknown} */ (await response.json());
    config = /** @type {{ enabled?: unknown, providerName?: unknown }} */ (body);
  } catch {
    return;
  }
  if (config.enabled !== true || typeof config.providerName !== "string") return;
  // Back to the page that asked for the sign-in (a console fragment only; the API checks it too).
  const back = location.hash.startsWith("#/") ? `?return=${encodeURIComponent(location.hash)}` : "";
  replace(
    section,
    h(
      "a",
      { id: "sign-in-provider", className: "button", href: `/console/oidc/login${back}` },
      `Sign in with ${config.providerName}`,
    ),
    h(
      "p",
      { className: "hint" },
      "With your organisation's account. What the console shows follows the permissions given to it.",
    ),
    h("p", { className: "or" }, "Or, for operators, a token or key:"),
  );
  section.hidden = false;
  noProvider.remove();
}
