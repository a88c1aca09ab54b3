import { z } from "@hono/zod-openapi";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "@studyflow/domain/study-config";

/** `limit` and `cursor` of the keyset-paged lists of study configuration. */
export const pageQuery = z.object({
  limit: z.coerce
    .number({ error: "limit must be a whole number" })
    .int("limit must be a whole number")
    .min(1, "limit must be at least 1")
    .max(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`)
    .default(DEFAULT_PAGE_SIZE)
    .openapi({ description: `page size (default ${DEFAULT_PAGE_SIZE})` }),
  // a cursor holds one key of at most a few hundred characters, JSON- and base64-encoded
  cursor: z.string().max(4_000).optional().openapi({ description: "nextCursor of the previous page" }),
});

export const nextCursorField = z.string().nullable().openapi({ description: "null on the last page" });
