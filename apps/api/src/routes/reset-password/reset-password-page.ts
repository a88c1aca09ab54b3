import { createHash } from "node:crypto";
import { PASSWORD_MIN_CHARACTERS, PASSWORD_RULE_DESCRIPTION } from "@studyflow/domain/participant-accounts";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { PAGE_CSP_LIMITS, PAGE_ROUTE } from "../page-route";

/** The policy's own words (packages/domain/src/accounts/passwords.ts), as HTML text. */
const RULE_HTML = PASSWORD_RULE_DESCRIPTION.replace(
  /[&<>"]/g,
  (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[character]!,
);

const STYLE = `
      body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; }
      label, input, button { display: block; width: 100%; margin-top: .5rem; font-size: 1rem; }
      input, button { padding: .5rem; box-sizing: border-box; }
      #outcome { margin-top: 1rem; }
    `;

const SCRIPT = `
      const token = new URLSearchParams(location.search).get("token") || "";
      const outcome = document.getElementById("outcome");
      document.getElementById("reset").addEventListener("submit", async (event) => {
        event.preventDefault();
        const newPassword = document.getElementById("password").value;
        const response = await fetch("/v1/password-reset/reset", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ token, newPassword }),
        });
        const body = await response.json().catch(() => ({}));
        outcome.textContent = response.ok ? "Your password has been changed." : body.error || "Something went wrong.";
      });
    `;

/**
 * The page the reset e-mail links to (RESET_PASSWORD_URL): a form that posts the token from its
 * own address and the new password to /v1/password-reset/reset. Static: the token is read by the
 * browser, never echoed by the server, so nothing of the request is reflected into the page.
 */
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Choose a new password · studyflow</title>
    <style>${STYLE}</style>
  </head>
  <body>
    <h1>Choose a new password</h1>
    <p id="rule">${RULE_HTML}</p>
    <form id="reset">
      <label for="password">New password</label>
      <input id="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_CHARACTERS}" aria-describedby="rule" />
      <button type="submit">Set password</button>
    </form>
    <p id="outcome" role="status"></p>
    <script>${SCRIPT}</script>
  </body>
</html>`;

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/**
 * Only this page's own inline script and style run (by their hashes: the page is static, so no
 * nonce is needed and no injected tag or handler could run); it calls this origin only; no other
 * page may frame it (a framed reset form invites clickjacking: a visitor typing a password into a
 * page dressed up by someone else); the form posts nowhere (the script sends it), so a password
 * never ends up in an address.
 */
export const PAGE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: [sha256(SCRIPT)],
  styleSrc: [sha256(STYLE)],
  ...PAGE_CSP_LIMITS,
};

/** The page the reset e-mail links to: for people, no part of the API document (hidden). */
export function registerResetPasswordPage(router: ApiRouter) {
  defineRoute(router, PAGE_ROUTE, (c) => {
    // nor may a cache keep the page under an address that holds a token
    c.header("Cache-Control", "no-store");
    return c.html(PAGE);
  });
}
