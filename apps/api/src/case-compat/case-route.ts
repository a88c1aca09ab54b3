import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { caseJsonBody } from "./json-body";
import { openapiBothSlashes } from "./trailing-slash";

/**
 * A CASE-shaped route's contract: createRoute's config, plus `body` (the zod schema of a JSON body
 * case-admin sends as text/plain with Go-style case-insensitive keys) and `middleware` (a route's
 * own auth, e.g. `managementAuth(deps)` on the /v1/auth router, where auth is per route).
 */
export type CaseRouteConfig<B extends z.ZodType | undefined> = Omit<RouteConfig, "middleware"> & {
  /** The JSON body's schema; absent: the route reads no body (any body sent is ignored). */
  body?: B;
  /** What the body is, for the OpenAPI document. */
  bodyDescription?: string;
  /** Runs before the body is read (auth first: 401 before 400). */
  middleware?: readonly MiddlewareHandler<AppEnv>[];
  /**
   * Also serve the path with its trailing slash toggled (default true): gin redirects one form to
   * the other, and case-admin calls both (`…/templates/`, `/v1/studies`). The twin is hidden from
   * the OpenAPI document. false for a path whose slashed twin would collide with another route.
   */
  bothSlashes?: boolean;
};

/** A JSON request body as createRoute documents it. */
interface JsonBody<B extends z.ZodType> {
  required: true;
  description: string;
  content: { "application/json": { schema: B } };
}

/** The route createRoute makes of a CaseRouteConfig: with `request.body` when the config has a body. */
export type CaseRoute<C extends CaseRouteConfig<z.ZodType | undefined>> = Omit<
  C,
  "body" | "bodyDescription" | "bothSlashes" | "middleware" | "request"
> & {
  middleware: MiddlewareHandler<AppEnv>[];
  request: C["body"] extends z.ZodType
    ? (C["request"] extends object ? C["request"] : object) & { body: JsonBody<C["body"]> }
    : C["request"] extends object
      ? C["request"]
      : object;
};

/**
 * Registers one CASE route: its body read as case-backend reads it (caseJsonBody: any
 * Content-Type, keys matched case-insensitively, an empty body 400 `body: required`), both
 * trailing-slash forms (openapiBothSlashes). Its failures are thrown on to the app's onError
 * (handleError), which answers CASE routes as every other route: `{"error": "..."}` with the
 * domain error's status.
 *
 * ```ts
 * caseRoute(router, {
 *   method: "put",
 *   path: "/{studyKey}/status",
 *   tags: ["studies"],
 *   summary: "Set a study's status (CASE)",
 *   security: MANAGEMENT_SECURITY,
 *   request: { params: studyKeyParam },
 *   body: z.object({ status: z.enum(["active", "inactive"]) }),
 *   responses: { 200: jsonContent(messageSchema, "done"), ...errorResponses([400, 401, 403, 404]) },
 * }, async (c) => {
 *   const { studyKey } = c.req.valid("param");
 *   const { status } = c.req.valid("json");
 *   await assertStudyPermission(db, managementOf(c), studyKey, "update-study-status");
 *   …
 *   return c.json({ message: "study status updated" }, 200);
 * });
 * ```
 */
export function caseRoute<const C extends CaseRouteConfig<z.ZodType | undefined>>(
  router: OpenAPIHono<AppEnv>,
  config: C,
  handler: RouteHandler<CaseRoute<C>, AppEnv>,
): CaseRoute<C> {
  const { body: schema, bodyDescription, bothSlashes = true, middleware = [], ...route } = config;
  const body = schema === undefined ? undefined : caseJsonBody(schema, bodyDescription);
  const made = createRoute({
    ...route,
    middleware: [...middleware, ...(body ? [body.middleware] : [])],
    ...(body ? { request: { ...route.request, body: body.body } } : {}),
  }) as unknown as CaseRoute<C>;
  if (bothSlashes) openapiBothSlashes(router, made, handler);
  else router.openapi(made, handler);
  return made;
}
