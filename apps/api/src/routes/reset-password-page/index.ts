import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { validationHook } from "../../validation";

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
    <style>
      body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; }
      label, input, button { display: block; width: 100%; margin-top: .5rem; font-size: 1rem; }
      input, button { padding: .5rem; box-sizing: border-box; }
      #outcome { margin-top: 1rem; }
    </style>
  </head>
  <body>
    <h1>Choose a new password</h1>
    <p>At least 12 characters with three of: lowercase letter, uppercase letter, digit, symbol.</p>
    <form id="reset">
      <label for="password">New password</label>
      <input id="password" type="password" autocomplete="new-password" required minlength="12" />
      <button type="submit">Set password</button>
    </form>
    <p id="outcome" role="status"></p>
    <script>
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
    </script>
  </body>
</html>`;

/**
 * A router of its own: RESET_PASSWORD_URL points at /reset-password, outside /v1/password-reset.
 * Registered with get(), not openapi(): a page for people is no part of the API document.
 */
export function createResetPasswordPageRouter() {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  router.get("/", (c) => {
    c.header(
      "Content-Security-Policy",
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
    );
    c.header("Referrer-Policy", "no-referrer");
    return c.html(PAGE);
  });
  return router;
}
