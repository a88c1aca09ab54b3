import type { OpenAPIHono, RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";

/**
 * Registers a CASE route at its path and at the path with the trailing slash toggled, as gin
 * serves its group roots (`/responses/` and, by redirect, `/responses`); clients call either. The
 * twin is left out of the OpenAPI document. A router's root ("/") is its mount point itself
 * (/v1/user), so its slashed twin (/v1/user/) is a pattern that matches only an empty rest.
 */
export function openapiBothSlashes<R extends RouteConfig>(
  router: OpenAPIHono<AppEnv>,
  route: R,
  handler: RouteHandler<R, AppEnv>,
): void {
  router.openapi(route, handler);
  const twin =
    route.path === "/" ? "/:trailingSlash{/?}" : route.path.endsWith("/") ? route.path.slice(0, -1) : `${route.path}/`;
  router.openapi({ ...route, path: twin, hide: true }, handler as never);
}
