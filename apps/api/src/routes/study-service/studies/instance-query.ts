import { z } from "@hono/zod-openapi";

/** `instanceID` of case-backend's public routes: checked against INSTANCE_ID (checkInstanceId). */
export const instanceQuery = z.object({
  instanceID: z
    .string()
    .max(200, "instanceID is longer than 200 characters")
    .optional()
    .openapi({ param: { name: "instanceID", in: "query" }, description: "this server's instance (INSTANCE_ID)" }),
});
