"use strict";
/*
 * Preload for case-admin (its unchanged build) that proves case-admin to studyflow's
 * POST /v1/auth/signin-with-idp: it adds X-Signin-Secret to that one request and to no other.
 * case-admin posts its sign-in with global fetch to `new URL("/v1/auth/signin-with-idp",
 * MANAGEMENT_API_URL)` and has no setting for a header of its own.
 *
 *   MANAGEMENT_API_URL=https://studyflow.example.org \
 *   MANAGEMENT_IDP_SIGNIN_SECRET=<the API's MANAGEMENT_IDP_SIGNIN_SECRET> \
 *   NODE_OPTIONS="--require /path/to/signin-secret.cjs" \
 *   node server.js        # or: npx next start
 *
 * Without both variables it changes nothing (the sign-in then answers 401).
 */
const secret = process.env.MANAGEMENT_IDP_SIGNIN_SECRET;
const base = process.env.MANAGEMENT_API_URL;

/** Where the secret may go: studyflow's sign-in route, compared by origin and path. */
function signInTarget() {
  try {
    const url = new URL("/v1/auth/signin-with-idp", base);
    return url.origin + url.pathname;
  } catch {
    return null;
  }
}

const target = secret && base ? signInTarget() : null;

if (target !== null && typeof globalThis.fetch === "function") {
  const originalFetch = globalThis.fetch;
  const urlOf = (input) => {
    try {
      const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url);
      return url.origin + url.pathname;
    } catch {
      return null;
    }
  };
  const methodOf = (input, init) =>
    String((init && init.method) || (input instanceof Request ? input.method : "GET")).toUpperCase();

  globalThis.fetch = function fetchWithSignInSecret(input, init) {
    if (urlOf(input) !== target || methodOf(input, init) !== "POST") return originalFetch.call(this, input, init);
    const headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
    headers.set("X-Signin-Secret", secret);
    return originalFetch.call(this, input, { ...init, headers });
  };
}
