import { z } from "@hono/zod-openapi";
import { studyKeyParam } from "../../schemas";

/** The path of one subscription: its id as listed, a positive whole number (below 2^53, so exact as a number). */
export const subscriptionParams = studyKeyParam.extend({
  id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, "id must be a subscription id (a positive whole number)")
    .openapi({ param: { name: "id", in: "path" }, example: "12" }),
});
