import { z } from "@hono/zod-openapi";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";

export function registerLiveness(router: ApiRouter) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/healthz",
      tags: ["health"],
      summary: "Liveness: the process answers",
      responses: {
        200: {
          description: "alive",
          content: { "application/json": { schema: z.object({ status: z.literal("ok") }) } },
        },
      },
    },
    (c) => c.json({ status: "ok" as const }, 200),
  );
}
