import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";

/** "/docs/" is how many people type it; the page has one address. Not in the API document (hidden). */
export function registerDocsSlashRedirect(app: ApiRouter) {
  defineRoute(
    app,
    { method: "get", path: "/docs/", hide: true, responses: { 308: { description: "to /docs" } } },
    (c) => c.redirect("/docs", 308),
  );
}
