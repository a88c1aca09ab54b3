import { z } from "@hono/zod-openapi";
import { MAX_CODE_LENGTH } from "@studyflow/domain/study-config";
import { instanceQuery } from "./instance-query";

/** `listKey` of case-backend's public code-list checks; required, as there. */
export const listKeyQuery = instanceQuery.extend({
  listKey: z
    .string()
    .min(1, "listKey is required")
    .max(200, "listKey is longer than 200 characters")
    .openapi({ param: { name: "listKey", in: "query" }, example: "invitation-codes" }),
});

export const codeQuery = listKeyQuery.extend({
  code: z
    .string()
    .min(1, "code is required")
    .max(MAX_CODE_LENGTH, `code is longer than ${MAX_CODE_LENGTH} characters`)
    .openapi({ param: { name: "code", in: "query" }, example: "A7K2-93QX" }),
});
