import { z } from "@hono/zod-openapi";
import { keyString, studyKeyParam } from "../../schemas";

/** The path of one study variable. */
export const variableParams = studyKeyParam.extend({
  key: keyString("key").openapi({ param: { name: "key", in: "path" }, example: "kitStock" }),
});

/** case-backend's answer to a delete: `{"success": true}`. */
export const successSchema = z.object({ success: z.literal(true) }).openapi("CaseSuccess");

/** Who may read a study's variables: readers of its configuration and those who manage them. */
export const READ_VARIABLES = ["read-study-config", "manage-study-variables"] as const;
