import { z } from "@hono/zod-openapi";
import { keyString } from "../../schemas";

/** A participant id in the path: bounded text; one the study does not hold is a 404. */
export const participantIdField = z
  .string()
  .min(1)
  .max(200)
  .openapi({ param: { name: "participantID", in: "path" } });

export const studyKeyField = keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } });

/** `{studyKey}/participants/{participantID}`. */
export const participantParams = z.object({ studyKey: studyKeyField, participantID: participantIdField });
