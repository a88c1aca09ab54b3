import { z } from "@hono/zod-openapi";
import { studyKeyParam } from "../../schemas";

/** The path of one study counter; the scope is trimmed and checked by the domain (counterScope). */
export const counterParams = studyKeyParam.extend({
  scope: z.string().openapi({ param: { name: "scope", in: "path" }, example: "kit-orders" }),
});

export const counterValueSchema = z.object({ value: z.number().int() }).openapi("StudyCounterValue");
