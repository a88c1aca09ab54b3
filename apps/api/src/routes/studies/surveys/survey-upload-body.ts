import { z } from "@hono/zod-openapi";
import { MAX_SURVEY_DEFINITION_BYTES } from "@studyflow/domain/surveys";
import { keyString } from "../../schemas";

/** The uploaded CASE Survey: only its key is read, the rest is kept as it is. */
export const surveyUpload = z
  .looseObject(
    {
      surveyDefinition: z.looseObject(
        { key: keyString("surveyDefinition.key").openapi({ example: "intake" }) },
        { error: "surveyDefinition must be an object: the survey's root item group, with its key" },
      ),
    },
    { error: "the survey must be a JSON object: a CASE Survey as case-editor-tools write it" },
  )
  .openapi("CaseSurveyUpload", {
    description:
      "A CASE Survey as case-editor-tools write it. Opaque apart from surveyDefinition.key; id, versionId, " +
      `published and unpublished are set by the server. At most ${MAX_SURVEY_DEFINITION_BYTES} bytes serialized.`,
  });
