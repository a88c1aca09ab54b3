// @ts-check
// The credential the console calls the API with. A pasted token or key lives in sessionStorage:
// one tab's session, gone when the tab closes, never sent anywhere but in the headers of the
// console's own calls. A sign-in at the organisation's OpenID provider lives in an HttpOnly cookie
// the page cannot read; the page keeps only what GET /console/oidc/session tells it (who, and the
// CSRF token its calls carry), in memory.

/**
 * @typedef {{ kind: "bearer" | "api-key", value: string }} PastedCredential
 * A management token (JWT) or a service account's key.
 * @typedef {{ kind: "session", subject: string, displayName: string, isAdmin: boolean, csrfToken: string }} ProviderSession
 * A sign-in at the organisation's provider: the session cookie, and its CSRF token in X-CSRF-Token.
 * @typedef {PastedCredential | ProviderSession} Credential
 */

const STORAGE_KEY = "studyflow.console.credential";

/** @type {ProviderSession | null} */
let providerSession = null;

/** @returns {PastedCredential | null} */
function loadPasted() {
  let raw;
  try {
    raw = sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
  if (!raw) return null;
  try {
    const parsed = /** @type {unknown} */ (JSON.parse(raw));
    if (typeof parsed !== "object" || parsed === null) return null;
    const { kind, value } = /** @type {{ kind?: unknown, value?: unknown }} */ (parsed);
    if ((kind === "bearer" || kind === "api-key") && typeof value === "string" && value !== "") return { kind, value };
  } catch {
    // a value written by something else: as if signed out
  }
  return null;
}

/**
 * The credential in use: a pasted one (an operator's choice in this tab) before the provider's session.
 * @returns {Credential | null}
 */
export function loadCredential() {
  return loadPasted() ?? providerSession;
}

/** @param {PastedCredential} credential */
export function saveCredential(credential) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
}

/** Forgets the credential in this page (a provider session's cookie goes with signOutOfProvider). */
export function clearCredential() {
  sessionStorage.removeItem(STORAGE_KEY);
  providerSession = null;
}

/**
 * Asks the API whether the browser holds a provider session (its cookie) and keeps what it says.
 * @returns {Promise<ProviderSession | null>}
 */
export async function loadProviderSession() {
  providerSession = null;
  let response;
  try {
    response = await fetch("/console/oidc/session", {
      headers: { Accept: "application/json" },
      cache: "no-store",
      credentials: "same-origin",
    });
  } catch {
    return null;
  }
  if (!response.ok) return null;
  try {
    const body = /** @type {unknown} */ (await response.json());
    const { subject, displayName, isAdmin, csrfToken } = /** @type {Record<string, unknown>} */ (body);
    if (typeof subject === "string" && typeof csrfToken === "string" && csrfToken !== "") {
      providerSession = {
        kind: "session",
        subject,
        displayName: typeof displayName === "string" && displayName !== "" ? displayName : subject,
        isAdmin: isAdmin === true,
        csrfToken,
      };
    }
  } catch {
    // not the API's JSON: not signed in
  }
  return providerSession;
}

/**
 * Ends the provider session at the API (the session row and the cookie); done is done whatever
 * the answer (an ended session is signed out already).
 * @param {ProviderSession} session
 */
export async function signOutOfProvider(session) {
  try {
    await fetch("/console/oidc/sign-out", {
      method: "POST",
      headers: { Accept: "application/json", "X-CSRF-Token": session.csrfToken },
      cache: "no-store",
      credentials: "same-origin",
    });
  } catch {
    // the API is out of reach: the session ends on its own
  }
  providerSession = null;
}

/**
 * The headers that carry the credential, as the API's management auth reads them.
 * @param {Credential} credential
 * @returns {Record<string, string>}
 */
export function credentialHeaders(credential) {
  switch (credential.kind) {
    case "bearer":
      return { Authorization: `Bearer ${credential.value}` };
    case "api-key":
      return { "X-API-Key": credential.value };
    case "session":
      return { "X-CSRF-Token": credential.csrfToken };
  }
}

/**
 * Whether fetch sends the browser's cookies: only for the provider session (its cookie is the
 * credential); a pasted credential's calls carry none.
 * @param {Credential | null} credential
 * @returns {RequestCredentials}
 */
export function cookieMode(credential) {
  return credential?.kind === "session" ? "same-origin" : "omit";
}

/**
 * Who the credential names, for the page header only: the provider session's name, a token's
 * subject as it claims it (the API verifies it on every call), or "service key".
 * @param {Credential} credential
 */
export function describeCredential(credential) {
  if (credential.kind === "session") {
    return credential.isAdmin ? `${credential.displayName} (admin)` : credential.displayName;
  }
  if (credential.kind === "api-key") return "service key";
  const payload = credential.value.split(".")[1];
  if (!payload) return "management token";
  try {
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const parsed = /** @type {unknown} */ (JSON.parse(json));
    const claims = /** @type {{ sub?: unknown, admin?: unknown }} */ (parsed);
    const subject = typeof claims.sub === "string" ? claims.sub : "management token";
    return claims.admin === true ? `${subject} (admin)` : subject;
  } catch {
    return "management token";
  }
}
