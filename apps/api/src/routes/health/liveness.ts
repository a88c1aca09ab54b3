import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";

const route = createRoute({
  method: "get",
  path: "/healthz",
  tags: ["health"],
  summary: "Liveness: the process answers",
  responses: {
    200: { description: "alive", content: { "application/json": { schema: z.object({ status: z.literal("ok") }) } } },
  },
});

export function registerLiveness(router: OpenAPIHono<AppEnv>) {
  router.openapi(route, (c) => c.json({ status: "ok" as const }, 200));
}
