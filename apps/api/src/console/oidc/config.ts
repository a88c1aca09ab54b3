import type { ApiRouter } from "../../routes/create-router";
import { defineRoute } from "../../routes/define-route";

/**
 * GET /console/oidc/config: {enabled, providerName}, always answered: the sign-in page asks it
 * whether to show the provider's button.
 */
export function registerConfig(router: ApiRouter, answer: { enabled: boolean; providerName: string | null }) {
  defineRoute(
    router,
    { method: "get", path: "/config", hide: true, responses: { 200: { description: "whether to offer the sign-in" } } },
    (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(answer, 200);
    },
  );
}
