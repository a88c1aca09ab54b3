import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { NONCE } from "hono/secure-headers";
import type { AppEnv } from "../../app-env";
import { errorBody } from "../../errors";
import { pageHeaders } from "../../middleware/page-headers";

/**
 * The API reference page (/docs): Scalar's viewer renders the OpenAPI document in the browser.
 * The viewer is the self-contained browser build of the installed @scalar/api-reference (one file,
 * no lazily loaded chunks), served from here, so the page works in a closed network: nothing it
 * loads or calls lies outside this origin.
 */

/** `dist/index.js` of the installed package; its browser build and package.json sit beside it. */
const PACKAGE_ENTRY = fileURLToPath(import.meta.resolve("@scalar/api-reference"));
const VIEWER_FILE = path.join(path.dirname(PACKAGE_ENTRY), "browser", "standalone.js");
const PACKAGE_JSON = path.join(path.dirname(PACKAGE_ENTRY), "..", "package.json");

/** Below the page's own address, so one mount serves both. */
export const API_REFERENCE_ASSETS_PATH = "/docs/assets";

interface ViewerAsset {
  /** Carries the package version: a new version is a new address, so browsers may keep each for good. */
  name: string;
  body: Uint8Array<ArrayBuffer>;
  gzipped: Uint8Array<ArrayBuffer>;
}

let viewerName: Promise<string> | undefined;
let viewerAsset: Promise<ViewerAsset> | undefined;

function nameOfViewer(): Promise<string> {
  viewerName ??= readFile(PACKAGE_JSON, "utf8").then((text) => {
    const { version } = JSON.parse(text) as { version: string };
    return `scalar-api-reference-${version}.js`;
  });
  return viewerName;
}

/**
 * Read and compressed on first use and kept: 4.3 MB, 1.3 MB gzipped (about 0.2 s of compression
 * once per process, off the event loop), which is what a browser on a slow network waits for.
 */
function loadViewer(): Promise<ViewerAsset> {
  viewerAsset ??= Promise.all([nameOfViewer(), readFile(VIEWER_FILE)]).then(async ([name, body]) => ({
    name,
    body,
    gzipped: await promisify(gzip)(body),
  }));
  return viewerAsset;
}

/** `gzip` among the accepted encodings, unless refused with q=0. */
const ACCEPTS_GZIP = /(?:^|,)\s*gzip\s*(?:,|$|;\s*q=(?!0(?:\.0*)?\s*(?:,|$)))/i;

/**
 * The page's inline start-up script and the viewer only by this request's nonce or from this
 * origin; styles inline too (the viewer sets style attributes, which no nonce covers); the
 * document and "Test request" calls to this API only; no fonts from elsewhere, no frames.
 */
const PAGE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'", NONCE],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

/** A page for people, outside the API document (plain Hono routes, not openapi ones). */
export function createApiReferencePageRouter(documentPath: string) {
  const router = new Hono<AppEnv>();
  router.use(pageHeaders(PAGE_CSP));
  router.get("/", async (c, next) => {
    const viewer = await nameOfViewer();
    const page = Scalar<AppEnv>({
      url: documentPath,
      pageTitle: "studyflow API reference",
      cdn: `${API_REFERENCE_ASSETS_PATH}/${viewer}`,
      nonce: c.get("secureHeadersNonce") ?? "",
      // Scalar's defaults that would reach its own hosts: the Inter and JetBrains Mono fonts from
      // fonts.scalar.com, the developer toolbar (shown on localhost; sharing goes through
      // Scalar's registry), "Open API Client" (client.scalar.com, given this document's address),
      // the AI agent and MCP buttons, telemetry. "Test Request" stays: it calls this API directly.
      withDefaultFonts: false,
      showDeveloperTools: "never",
      hideClientButton: true,
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
    });
    return page(c, next);
  });
  router.get("/assets/:name", async (c) => {
    const name = c.req.param("name");
    if (name !== (await nameOfViewer())) return c.json(errorBody(`no API reference asset named "${name}"`), 404);
    const viewer = await loadViewer();
    const gzipped = ACCEPTS_GZIP.test(c.req.header("Accept-Encoding") ?? "");
    const body = gzipped ? viewer.gzipped : viewer.body;
    return c.body(body, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      // The address changes with the package version (see ViewerAsset).
      "Cache-Control": "public, max-age=31536000, immutable",
      Vary: "Accept-Encoding",
      ...(gzipped ? { "Content-Encoding": "gzip" } : {}),
    });
  });
  return router;
}
