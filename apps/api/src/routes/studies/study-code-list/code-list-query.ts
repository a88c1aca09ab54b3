import { z } from "@hono/zod-openapi";

/** `listKey` as case-backend reads it from the query: trimmed, required. */
export const listKeyQuery = z
  .string({ error: "listKey: required" })
  .transform((raw) => raw.trim())
  .pipe(z.string().min(1, "listKey: required").max(200, "listKey: is longer than 200 characters"))
  .openapi({ param: { name: "listKey", in: "query" }, type: "string", example: "kit-codes" });

/** Who may read a study's code lists: readers of its configuration and those who manage them. */
export const READ_CODE_LISTS = ["read-study-config", "manage-study-code-lists"] as const;
