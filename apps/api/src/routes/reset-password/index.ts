import { pageHeaders } from "../../middleware/page-headers";
import { createRouter } from "../create-router";
import { PAGE_CSP, registerResetPasswordPage } from "./reset-password-page";

/**
 * A router of its own: RESET_PASSWORD_URL points at /reset-password, outside /v1/password-reset.
 * Its headers cover every path below it, an unknown one too.
 */
export function createResetPasswordPageRouter() {
  const router = createRouter();
  router.use(pageHeaders(PAGE_CSP));
  registerResetPasswordPage(router);
  return router;
}
