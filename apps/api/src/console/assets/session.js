// @ts-check
// The credential the console calls the API with. It lives in sessionStorage: one tab's session,
// gone when the tab closes, never sent anywhere but in the headers of the console's own calls.

/**
 * @typedef {{ kind: "bearer" | "api-key", value: string }} Credential
 * A management token (JWT) or a service account's key.
 */

const STORAGE_KEY = "studyflow.console.credential";

/** @returns {Credential | null} */
export function loadCredential() {
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

/** @param {Credential} credential */
export function saveCredential(credential) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
}

export function clearCredential() {
  sessionStorage.removeItem(STORAGE_KEY);
}

/**
 * The headers that carry the credential, as the API's management auth reads them.
 * @param {Credential} credential
 * @returns {Record<string, string>}
 */
export function credentialHeaders(credential) {
  return credential.kind === "bearer"
    ? { Authorization: `Bearer ${credential.value}` }
    : { "X-API-Key": credential.value };
}

/**
 * Who the credential names, for the page header only: a token's subject as it claims it (the API
 * verifies it on every call), or "service key".
 * @param {Credential} credential
 */
export function describeCredential(credential) {
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
