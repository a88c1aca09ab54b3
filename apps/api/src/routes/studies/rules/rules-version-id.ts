import { z } from "@hono/zod-openapi";
import { studyKeyParam } from "../../schemas";

/** `{studyKey}/rules/versions/{id}`: case-backend's version id, studyflow's version number. */
export const rulesVersionIdParams = studyKeyParam.extend({
  id: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, "id must be a rules version number (1, 2, …)")
    .openapi({ param: { name: "id", in: "path" }, example: "3" }),
});
