import { Scalar } from "@scalar/hono-api-reference";
import { NONCE } from "hono/secure-headers";
import type { AppEnv } from "../../app-env";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { PAGE_CSP_LIMITS, PAGE_ROUTE } from "../page-route";
import { API_REFERENCE_ASSETS_PATH, nameOfViewer } from "./viewer-asset";

/**
 * The page's inline start-up script and the viewer only by this request's nonce or from this
 * origin; styles inline too (the viewer sets style attributes, which no nonce covers); the
 * document and "Test request" calls to this API only; no fonts from elsewhere, no frames.
 */
export const PAGE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'", NONCE],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  ...PAGE_CSP_LIMITS,
};

/**
 * The API reference page (/docs): Scalar's viewer renders the OpenAPI document at `documentPath`
 * in the browser. A page for people, no part of the API document (hidden).
 */
export function registerApiReferencePage(router: ApiRouter, documentPath: string) {
  defineRoute(router, PAGE_ROUTE, async (c, next) => {
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
    // Scalar's middleware always answers with the page (its type allows handing on instead)
    return (await page(c, next)) ?? c.res;
  });
}
