import { z } from "@hono/zod-openapi";
import { keyString, studyKeyParam } from "../../schemas";

/** The path of one code list. */
export const codeListParams = studyKeyParam.extend({
  listKey: keyString("listKey").openapi({ param: { name: "listKey", in: "path" }, example: "kit-codes" }),
});

export const codeParams = codeListParams.extend({
  code: z
    .string()
    .min(1, "code must not be empty")
    .max(1_000, "code is longer than 1000 characters")
    .openapi({ param: { name: "code", in: "path" }, description: "percent-encoded", example: "KIT-0001" }),
});
