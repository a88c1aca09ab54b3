import { z } from "@hono/zod-openapi";
import { caseBoolQuery } from "../../../case-compat";

/** How responses are flattened, as case-backend reads it from the query. */
export const responseFormatQuery = z.object({
  shortKeys: caseBoolQuery("shortKeys", "drop the survey key prefix of item keys in column names"),
  questionOptionSep: z
    .string()
    .max(20, "questionOptionSep is longer than 20 characters")
    .optional()
    .openapi({ description: 'between a question and its slot in column names (default "-")' }),
  extraContextColumns: z
    .string()
    .max(2_000, "extraContextColumns is longer than 2000 characters")
    .optional()
    .openapi({ description: "comma-separated context keys to add as columns" }),
});

export function flatOptions(query: z.infer<typeof responseFormatQuery>, accountColumns: boolean, now: number) {
  return {
    shortKeys: query.shortKeys ?? false,
    questionOptionSep: query.questionOptionSep ?? "-",
    extraContextColumns: query.extraContextColumns ? query.extraContextColumns.split(",") : [],
    accountColumns,
    now,
  };
}
