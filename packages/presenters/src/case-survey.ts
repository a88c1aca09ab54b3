import { z } from "@hono/zod-openapi";
import type { SurveyVersion } from "@studyflow/domain/surveys";

const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** A stored survey version as case-backend answers it: the CASE Survey document. */
export const caseSurveyDocumentSchema = z
  .looseObject({
    id: z.string().openapi({ description: "the version's id (case-backend: the document's ObjectID)" }),
    surveyKey: z.string().openapi({ example: "intake" }),
    versionId: z.string().openapi({ description: "assigned by the server: YY-MM-N", example: "26-06-1" }),
    published: z.number().int().openapi({ description: "Unix seconds, by the server's clock" }),
    unpublished: z
      .number()
      .int()
      .optional()
      .openapi({ description: "Unix seconds; absent while the version is published" }),
    surveyDefinition: z.record(z.string(), z.unknown()).openapi({ description: "the survey's root item group" }),
  })
  .openapi("CaseSurveyDocument", {
    description:
      "A CASE Survey as case-backend stores it: the uploaded document (props, availableFor, prefillRules, " +
      "contextRules, metadata… as uploaded) with the server's id, surveyKey, versionId, published and unpublished.",
  });

export type CaseSurveyDocument = z.infer<typeof caseSurveyDocumentSchema>;

/** The CASE Survey of a version, whole: what the survey editor loads. */
export function presentCaseSurvey(version: SurveyVersion): CaseSurveyDocument {
  const definition = version.definition;
  const group = definition["surveyDefinition"];
  return {
    ...definition,
    id: String(version.id),
    surveyKey: version.surveyKey,
    versionId: version.versionId,
    published: unixSeconds(version.publishedAt),
    ...(version.unpublishedAt === null ? {} : { unpublished: unixSeconds(version.unpublishedAt) }),
    surveyDefinition: typeof group === "object" && group !== null ? (group as Record<string, unknown>) : {},
  };
}
