import { z } from "@hono/zod-openapi";

/**
 * Query values as case-backend reads them, for the data-exporter routes.
 */

const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"];
const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"];

/**
 * A boolean query parameter as Go's strconv.ParseBool reads it (`true`, `1`, `T`, …). case-backend
 * answers 400 to any other value of `shortKeys`; studyflow does so for every flag.
 */
export const goBoolQuery = (name: string, description: string) =>
  z
    .enum([...GO_TRUE, ...GO_FALSE] as [string, ...string[]], { error: `${name} must be true or false` })
    .optional()
    .transform((value) => (value === undefined ? undefined : GO_TRUE.includes(value)))
    .openapi({ type: "string", enum: ["true", "false"], description, param: { name, in: "query" } });

/** A Unix-seconds query parameter (the reports' `from` and `until`). */
export const unixSecondsQuery = (name: string, description: string) =>
  z
    .string()
    .regex(/^-?\d{1,12}$/, `${name} must be a Unix time in whole seconds`)
    .optional()
    .transform((value) => (value === undefined ? undefined : Number(value)))
    .openapi({ type: "string", description, example: "1780000000", param: { name, in: "query" } });

/** `filter` and `sort`: Mongo-style JSON in the query, as case-admin sends it (URL-encoded, often twice). */
export const caseJsonQuery = (name: "filter" | "sort", description: string) =>
  z
    .string()
    .optional()
    .openapi({ description, param: { name, in: "query" } });
