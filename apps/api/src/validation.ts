import type { Hook } from "@hono/zod-openapi";
import type { AppEnv } from "./app-env";
import { core as zodCore, type z } from "zod";
import { errorBody } from "./errors";

/** Turns zod issues into one readable sentence: `body.key: Required; body.x: …`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], where: string): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const path = [where, ...issue.path.map(String)].join(".");
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

/** Every request-validation failure is a 400 with a JSON error body naming the field. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result, c) => {
  if (!result.success) {
    const target = (result as { target?: string }).target ?? "request";
    const where = target === "json" ? "body" : target;
    return c.json(errorBody(describeIssues(result.error.issues, where)), 400);
  }
  return undefined;
};

/**
 * `schema.safeParseAsync(value)`'s answer, from zod's synchronous parse when the schema allows it
 * (no async refinements or transforms; one that has them makes the synchronous parse throw, and is
 * then parsed asynchronously). The async parse wraps every field's check in a promise: 2–3 times
 * the time for a survey response (`npx tsx apps/api/bench/validation-bench.ts`).
 */
export async function safeParseQuickly<T extends z.ZodType>(schema: T, value: unknown) {
  try {
    return schema.safeParse(value);
  } catch (error) {
    if (error instanceof zodCore.$ZodAsyncError) return schema.safeParseAsync(value);
    throw error;
  }
}
