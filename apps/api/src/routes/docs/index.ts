import { pageHeaders } from "../../middleware/page-headers";
import { createRouter, type ApiRouter } from "../create-router";
import { registerApiReferenceAsset } from "./api-reference-asset";
import { PAGE_CSP, registerApiReferencePage } from "./api-reference-page";
import { registerDocsSlashRedirect } from "./docs-slash-redirect";
import { OPENAPI_PATH, registerOpenApiDocument } from "./openapi-document";

/**
 * The API reference page (/docs) and its viewer script (/docs/assets/…): pages for people, their
 * headers on every path below /docs, an unknown one too.
 */
export function createApiReferencePageRouter(documentPath: string) {
  const router = createRouter();
  router.use(pageHeaders(PAGE_CSP));
  registerApiReferencePage(router, documentPath);
  registerApiReferenceAsset(router);
  return router;
}

/**
 * What documents the API: the OpenAPI document of `app` (/openapi.json) and its reference page
 * (/docs). Registered on the app itself, after every router: the document is the whole app's.
 */
export function registerOpenApi(app: ApiRouter) {
  registerOpenApiDocument(app);
  app.route("/docs", createApiReferencePageRouter(OPENAPI_PATH));
  registerDocsSlashRedirect(app);
}
