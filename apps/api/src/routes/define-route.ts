import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler, type z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { caseJsonBody } from "../case-compat/json-body";
import { safeParseQuickly } from "../validation";
import { isCheckedByMiddleware } from "../middleware/checked-headers";

/**
 * An operation's contract: createRoute's config (method, path, tags, summary, security, request
 * params/query/headers, responses), plus the options that differ between operations:
 *
 * - `caseBody`: the zod schema of a JSON body read as case-backend reads it (any Content-Type,
 *   keys matched case-insensitively, an empty body 400 `body: required`). A route whose body must
 *   be `application/json` gives `request.body` instead, as createRoute documents it.
 * - `middleware`: the route's own middleware (a rate limit, an idempotency key, auth where a router
 *   has no common auth), run before the body is read (auth first: 401 before 400).
 * - `afterBody`: middleware that needs the CASE body as the schema names its keys (a limit keyed on
 *   the e-mail sent, an idempotency fingerprint of the matched body), run after the body reader.
 * - `bothSlashes`: also serve the path with its trailing slash toggled, hidden from the OpenAPI
 *   document. gin redirects one form to the other and case-admin calls both (`…/templates/`,
 *   `/v1/studies`), so CASE's routes set it; studyflow's own routes do not.
 */
export type RouteDefinition<B extends z.ZodType | undefined> = Omit<RouteConfig, "middleware"> & {
  caseBody?: B;
  /** What the CASE body is, for the OpenAPI document. */
  bodyDescription?: string;
  middleware?: readonly MiddlewareHandler<AppEnv>[];
  afterBody?: readonly MiddlewareHandler<AppEnv>[];
  /** @defaultValue false */
  bothSlashes?: boolean;
};

/** A JSON request body as createRoute documents it. */
interface JsonBody<B extends z.ZodType> {
  required: true;
  description: string;
  content: { "application/json": { schema: B } };
}

/** The route createRoute makes of a definition: with `request.body` when it has a `caseBody`. */
export type DefinedRoute<D extends RouteDefinition<z.ZodType | undefined>> = Omit<
  D,
  "caseBody" | "bodyDescription" | "bothSlashes" | "middleware" | "afterBody" | "request"
> & {
  middleware: MiddlewareHandler<AppEnv>[];
  request: D["caseBody"] extends z.ZodType
    ? (D["request"] extends object ? D["request"] : object) & { body: JsonBody<D["caseBody"]> }
    : D["request"] extends object
      ? D["request"]
      : object;
};

/**
 * `schema` as zod-openapi's validator runs it: its `safeParseAsync` is zod's synchronous parse,
 * which answers the same for any schema without async refinements or transforms (one that has
 * them makes the synchronous parse throw, and is then parsed asynchronously). zod's async parse
 * wraps every field's check in a promise: a survey response's body took 19–26 µs that way against
 * 8–10 µs, on every submit (`npx tsx apps/api/bench/validation-bench.ts`).
 */
export function parsedSynchronously<T extends z.ZodType>(schema: T): T {
  const safeParseAsync = (value: unknown) => safeParseQuickly(schema, value);
  // the schema itself underneath: its shape, metadata and every other method are the schema's
  return Object.assign(Object.create(schema) as T, { safeParseAsync });
}

const isZodSchema = (schema: unknown): schema is z.ZodType =>
  typeof schema === "object" && schema !== null && "_zod" in schema;

/** A route's request as it is served (see defineRoute). */
function servedRequest(request: RouteConfig["request"]): RouteConfig["request"] {
  if (request === undefined) return undefined;
  const served = { ...request };
  if (isZodSchema(request.params)) served.params = parsedSynchronously(request.params);
  if (isZodSchema(request.query)) served.query = parsedSynchronously(request.query);
  // the route's own middleware checks these headers before any validator would (checked-headers.ts)
  if (request.headers !== undefined && isCheckedByMiddleware(request.headers)) served.headers = undefined;
  const json = request.body?.content["application/json"];
  if (request.body && json && "schema" in json && isZodSchema(json.schema)) {
    served.body = {
      ...request.body,
      content: { ...request.body.content, "application/json": { ...json, schema: parsedSynchronously(json.schema) } },
    };
  }
  return served;
}

/** The path a route is also served at when it serves both trailing-slash forms. */
function slashTwin(path: string): string {
  // A router's root ("/") is its mount point itself (/v1/user): its slashed twin (/v1/user/) is a
  // parameter that matches only an empty rest (not "/", which would serve /v1/user// too).
  if (path === "/") return "/:trailingSlash{.{0}}";
  return path.endsWith("/") ? path.slice(0, -1) : `${path}/`;
}

/**
 * Declares one operation on a router: its definition and its handler. Every operation of the API
 * is declared so, one per file, `registerX(router, deps)` calling this. The handler's failures are
 * thrown on to the app's onError (errors.ts), the one place errors become answers.
 *
 * ```ts
 * export function registerStudyStatus(router: ApiRouter, deps: AppDeps) {
 *   defineRoute(router, {
 *     method: "put",
 *     path: "/{studyKey}/status",
 *     tags: ["studies"],
 *     summary: "Set a study's status (CASE)",
 *     security: MANAGEMENT_SECURITY,
 *     request: { params: studyKeyParam },
 *     caseBody: z.object({ status: z.enum(["active", "inactive"]) }),
 *     bothSlashes: true,
 *     responses: { 200: jsonContent(messageSchema, "done"), ...errorResponses([400, 401, 403, 404]) },
 *   }, async (c) => {
 *     const { studyKey } = c.req.valid("param");
 *     const { status } = c.req.valid("json");
 *     await setStudyStatus(deps.database.db, managementOf(c), studyKey, status);
 *     return c.json({ message: "study status updated" }, 200);
 *   });
 * }
 * ```
 */
export function defineRoute<const D extends RouteDefinition<z.ZodType | undefined>>(
  router: OpenAPIHono<AppEnv>,
  definition: D,
  handler: RouteHandler<DefinedRoute<D>, AppEnv>,
): DefinedRoute<D> {
  const {
    caseBody: schema,
    bodyDescription,
    bothSlashes = false,
    middleware = [],
    afterBody = [],
    ...config
  } = definition;
  const body = schema === undefined ? undefined : caseJsonBody(schema, bodyDescription);
  const route = createRoute({
    ...config,
    middleware: [...middleware, ...(body ? [body.middleware] : []), ...afterBody],
    ...(body ? { request: { ...config.request, body: body.body } } : {}),
  }) as unknown as DefinedRoute<D>;
  // Documented as declared; served hidden, with what zod-openapi's validators run swapped for the
  // same schemas parsed synchronously, and without the headers the route's middleware checks itself.
  const { middleware: _middleware, hide, ...documented } = route as RouteConfig;
  if (!hide) router.openAPIRegistry.registerPath(documented);
  const served = { ...route, request: servedRequest(route.request), hide: true } as unknown as DefinedRoute<D>;
  router.openapi(served, handler);
  if (bothSlashes) router.openapi({ ...served, path: slashTwin(served.path), hide: true }, handler as never);
  return route;
}
