import { z } from "@hono/zod-openapi";
import { loggerOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";

const READINESS_TIMEOUT_MS = 2_000;

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer in time`)), READINESS_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerReadiness(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/readyz",
      tags: ["health"],
      summary: "Readiness: PostgreSQL and Redis answer",
      responses: {
        200: {
          description: "ready",
          content: { "application/json": { schema: z.object({ status: z.literal("ready") }) } },
        },
        ...errorResponses([503], { 503: "a dependency does not answer" }),
      },
    },
    async (c) => {
      const failures: string[] = [];
      await Promise.all([
        withTimeout(deps.database.sql`select 1`, "postgres").catch((error: unknown) => {
          loggerOf(c).warn({ err: error }, "readiness: postgres");
          failures.push("postgres");
        }),
        withTimeout(deps.redis.ping(), "redis").catch((error: unknown) => {
          loggerOf(c).warn({ err: error }, "readiness: redis");
          failures.push("redis");
        }),
      ]);
      if (failures.length > 0) return c.json({ error: `not ready: ${failures.sort().join(", ")} unavailable` }, 503);
      return c.json({ status: "ready" as const }, 200);
    },
  );
}
