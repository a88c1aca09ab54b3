import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { API_KEY_HEADER } from "../auth/service-keys";

export const OPENAPI_PATH = "/openapi.json";

/** Serves the OpenAPI 3.1 document generated from the route definitions, and a reference page. */
export function registerOpenApi(router: OpenAPIHono<AppEnv>) {
  router.openAPIRegistry.registerComponent("securitySchemes", "managementBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "Management token (researchers, operators): HS256 with typ=management, or RS256/ES256 from the configured JWKS.",
  });
  router.openAPIRegistry.registerComponent("securitySchemes", "participantBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Participant token: HS256 with typ=participant and the user's current token version.",
  });
  router.openAPIRegistry.registerComponent("securitySchemes", "serviceApiKey", {
    type: "apiKey",
    in: "header",
    name: API_KEY_HEADER,
    description:
      "Service account key (machines), instead of a management token: `sf_…`, created with `service-key:create`. " +
      "Acts as its subject with that subject's permissions, never as admin. Not accepted on participant routes; " +
      "sending it together with an Authorization header is a 400.",
  });
  router.doc31(OPENAPI_PATH, {
    openapi: "3.1.0",
    info: {
      title: "studyflow API",
      version: "1.0.0",
      description: "Study management: participant events, bulk rule runs, password reset, study settings.",
    },
  });
  // The reference page is a static shell; the Scalar viewer renders the document in the browser.
  router.get("/docs", (c) =>
    c.html(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>studyflow API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="${OPENAPI_PATH}"></script>
    <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>
  </body>
</html>`),
  );
}
