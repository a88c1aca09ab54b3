import { API_KEY_HEADER } from "../../auth/service-keys";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";

export const OPENAPI_PATH = "/openapi.json";

const DOCUMENT_CONFIG: Parameters<ApiRouter["getOpenAPI31Document"]>[0] = {
  openapi: "3.1.0",
  info: {
    title: "studyflow API",
    version: "1.0.0",
    description: "Study management: participant events, bulk rule runs, password reset, study settings.",
  },
};

/**
 * The OpenAPI 3.1 document generated from the route definitions of `app` (every router mounted
 * on it by now), with the security schemes they name, at OPENAPI_PATH. Not in itself (hidden).
 */
export function registerOpenApiDocument(app: ApiRouter) {
  app.openAPIRegistry.registerComponent("securitySchemes", "managementBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "Management token (researchers, operators): HS256 with typ=management, or a token of the configured identity provider (MANAGEMENT_JWKS_URL; its issuer, audience and algorithms pinned).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "participantBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Participant token: HS256 with typ=participant and the user's current token version.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "serviceApiKey", {
    type: "apiKey",
    in: "header",
    name: API_KEY_HEADER,
    description:
      "Service account key (machines), instead of a management token: `sf_…`, created with `service-key:create`. " +
      "Acts as its subject with that subject's permissions, never as admin. Not accepted on participant routes; " +
      "sending it together with an Authorization header is a 400.",
  });
  defineRoute(
    app,
    { method: "get", path: OPENAPI_PATH, hide: true, responses: { 200: { description: "the document" } } },
    (c) => {
      try {
        return c.json(app.getOpenAPI31Document(DOCUMENT_CONFIG));
      } catch (error) {
        return c.json(error, 500);
      }
    },
  );
}
