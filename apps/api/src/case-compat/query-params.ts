import { z } from "@hono/zod-openapi";

// Query values of CASE-shaped routes as case-backend (gin + Go's strconv) reads them.

const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"];
const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"];

/** A boolean as Go's strconv.ParseBool reads it; any other value is a 400 naming the parameter. */
export const caseBoolQuery = (name: string, description: string) =>
  z
    .enum([...GO_TRUE, ...GO_FALSE] as [string, ...string[]], { error: `${name} must be true or false` })
    .optional()
    .transform((value) => (value === undefined ? undefined : GO_TRUE.includes(value)))
    .openapi({ type: "string", enum: ["true", "false"], description, param: { name, in: "query" } });

/** Unix seconds as strconv.ParseInt reads them (the reports' `from` and `until`). */
export const caseSecondsQuery = (name: string, description: string) =>
  z
    .string()
    .regex(/^[+-]?\d{1,12}$/, `${name} must be a Unix time in whole seconds`)
    .optional()
    .transform((value) => (value === undefined ? undefined : Number(value)))
    .openapi({ type: "string", description, example: "1780000000", param: { name, in: "query" } });

/** `filter` / `sort`: Mongo-style JSON, parsed by the route with parseCaseJsonParam (a 400 naming it). */
export const caseJsonQueryParam = (name: "filter" | "sort", description: string) =>
  z
    .string()
    .optional()
    .openapi({ description, param: { name, in: "query" } });
