import { z } from "@hono/zod-openapi";
import { studyKeyParam, surveyKeyField } from "../../schemas";

/** `{studyKey}/{surveyKey}/versions/{versionId}`. */
export const surveyVersionParams = studyKeyParam.extend({
  surveyKey: surveyKeyField,
  versionId: z
    .string()
    .min(1, "versionId must not be empty")
    .max(200, "versionId is longer than 200 characters")
    .openapi({ param: { name: "versionId", in: "path" }, example: "26-06-1" }),
});
