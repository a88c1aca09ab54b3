import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { etag } from "hono/etag";
import type { AppDeps } from "../deps";
import { createConsoleOidcRouter } from "./oidc";
import { TASK_STATUS_MODULE, taskStatusModuleSource } from "./task-status-module";
import { pageHeaders } from "../middleware/page-headers";
import { createRouter } from "../routes/create-router";
import { registerConsoleAsset, type ConsoleAsset } from "./console-asset";
import { registerConsolePage } from "./console-page";

/**
 * The browser console (/console): one static page and its ES modules and stylesheet, served from
 * the assets folder beside this file (the production build copies it next to the bundle). It holds
 * no data and no secret: the page signs in in the browser and calls the JSON API with the token,
 * which is where permissions are enforced; or, after a sign-in at the organisation's OpenID
 * provider (./oidc), with the session cookie and its CSRF token.
 */
const ASSETS_DIR = fileURLToPath(new URL("./assets/", import.meta.url));

/** What is served below /console/assets/; the folder's tsconfig.json and the page itself are not. */
const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/**
 * Read once: the files are small and change only with a deployment. task-status.js is not among
 * them: it is written from the domain's task-status tables, which the CLI reads too.
 */
function readAssets(): { html: string; assets: Map<string, ConsoleAsset> } {
  const assets = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(ASSETS_DIR)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType) assets.set(name, { body: readFileSync(path.join(ASSETS_DIR, name), "utf8"), contentType });
  }
  assets.set(TASK_STATUS_MODULE, { body: taskStatusModuleSource(), contentType: CONTENT_TYPES[".js"]! });
  return { html: readFileSync(path.join(ASSETS_DIR, "index.html"), "utf8"), assets };
}

/**
 * Scripts and styles only from this origin's files (no inline code, so an injected tag or handler
 * could not run), calls only to this origin, no frames, no plugins, no forms posting elsewhere;
 * and Trusted Types with no policy: the browser itself refuses any HTML string written into the
 * page (innerHTML and the like), on top of the console building its DOM from text.
 */
const CONSOLE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  connectSrc: ["'self'"],
  imgSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
  requireTrustedTypesFor: ["'script'"],
  trustedTypes: ["'none'"],
};

/** Pages for people, hidden from the API document. */
export function createConsoleRouter(deps: AppDeps) {
  const { html, assets } = readAssets();
  const router = createRouter();
  router.use(pageHeaders(CONSOLE_CSP));
  // Revalidated on each load (no-cache) and answered 304 while unchanged.
  router.use(etag());
  router.use(async (c, next) => {
    await next();
    // The sign-in's answers say no-store themselves.
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-cache");
  });
  // "/console/" is how many people type it; the page has one address. (This middleware's own
  // route is the mount point followed by "/*".)
  router.use(async (c, next) => {
    const page = c.req.routePath.replace(/\/\*$/, "");
    if (c.req.method === "GET" && c.req.path !== page && c.req.path.replace(/\/+$/, "") === page) {
      return c.redirect(page, 308);
    }
    await next();
  });
  registerConsolePage(router, html);
  router.route("/oidc", createConsoleOidcRouter(deps));
  registerConsoleAsset(router, assets);
  return router;
}
