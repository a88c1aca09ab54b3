import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { API_KEY_HEADER } from "../auth/service-keys";
import { createApiReferencePageRouter } from "./api-reference-page";

export const OPENAPI_PATH = "/openapi.json";

/** Serves the OpenAPI 3.1 document generated from the route definitions, and its reference page (/docs). */
export function registerOpenApi(router: OpenAPIHono<AppEnv>) {
  router.openAPIRegistry.registerComponent("securitySchemes", "managementBearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "Management token (researchers, operators): HS256 with typ=management, or a token of the configured identity provider (MANAGEMENT_JWKS_URL; its issuer, audience and algorithms pinned).",
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
  router.route("/docs", createApiReferencePageRouter(OPENAPI_PATH));
  // "/docs/" is how many people type it; the page has one address.
  router.get("/docs/", (c) => c.redirect("/docs", 308));
}
