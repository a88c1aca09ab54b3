import type { ApiRouter } from "../routes/create-router";
import { defineRoute } from "../routes/define-route";
import { PAGE_ROUTE } from "../routes/page-route";

/** GET /console: the console's one page (it routes by the address's fragment itself). */
export function registerConsolePage(router: ApiRouter, html: string) {
  defineRoute(router, { ...PAGE_ROUTE, responses: { 200: { description: "the console" } } }, (c) => c.html(html));
}
