import { z } from "@hono/zod-openapi";
import type { SurveySummary, SurveyVersion, SurveyVersionInfo, UnpublishedSurvey } from "@studyflow/domain/surveys";

const isoInstant = (description: string) => z.string().openapi({ description: `${description} (ISO 8601)` });
const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** A version's metadata, as management sees it. */
export const surveyVersionInfoSchema = z
  .object({
    surveyKey: z.string().openapi({ example: "intake" }),
    versionId: z.string().openapi({ description: "assigned by the server: YY-MM-N", example: "26-06-1" }),
    publishedAt: isoInstant("when it was uploaded and published, by the server's clock"),
    publishedBy: z.string().openapi({ description: "the management subject that uploaded it" }),
    unpublishedAt: isoInstant("when the survey was unpublished").nullable(),
  })
  .openapi("SurveyVersionInfo");

export function presentSurveyVersionInfo(version: SurveyVersionInfo): z.infer<typeof surveyVersionInfoSchema> {
  return {
    surveyKey: version.surveyKey,
    versionId: version.versionId,
    publishedAt: version.publishedAt.toISOString(),
    publishedBy: version.publishedBy,
    unpublishedAt: version.unpublishedAt?.toISOString() ?? null,
  };
}

/** The CASE Survey JSON as uploaded, with the server's versionId and published (and unpublished) in it. */
export const caseSurveySchema = z.record(z.string(), z.unknown()).openapi("CaseSurvey", {
  description:
    "A CASE Survey as case-editor-tools write it ({surveyDefinition: {key, items…}, props, availableFor…}), opaque " +
    "apart from surveyDefinition.key; versionId, published and unpublished (Unix seconds) are the server's.",
});

export function presentSurveyDocument(version: SurveyVersion): z.infer<typeof caseSurveySchema> {
  return {
    ...version.definition,
    versionId: version.versionId,
    published: unixSeconds(version.publishedAt),
    ...(version.unpublishedAt === null ? {} : { unpublished: unixSeconds(version.unpublishedAt) }),
  };
}

export const surveySummarySchema = z
  .object({
    surveyKey: z.string(),
    currentVersionId: z
      .string()
      .nullable()
      .openapi({ description: "the version participants get; null if unpublished" }),
    publishedAt: isoInstant("when the current version was published").nullable(),
    versionCount: z.number().int(),
    unpublished: z.boolean(),
    unpublishedAt: isoInstant("when the survey was unpublished").nullable(),
  })
  .openapi("SurveySummary");

export function presentSurveySummary(summary: SurveySummary): z.infer<typeof surveySummarySchema> {
  return {
    surveyKey: summary.surveyKey,
    currentVersionId: summary.currentVersionId,
    publishedAt: summary.publishedAt?.toISOString() ?? null,
    versionCount: summary.versionCount,
    unpublished: summary.currentVersionId === null,
    unpublishedAt: summary.unpublishedAt?.toISOString() ?? null,
  };
}

export const unpublishedSurveySchema = z.object({
  message: z.string().openapi({ example: "survey unpublished" }),
  surveyKey: z.string(),
  unpublishedAt: isoInstant("when it was unpublished (earlier, when it already was)"),
  versionsUnpublished: z
    .number()
    .int()
    .openapi({ description: "versions that were published until now; 0 when it already was unpublished" }),
});

export function presentUnpublishedSurvey(result: UnpublishedSurvey): z.infer<typeof unpublishedSurveySchema> {
  return {
    message: "survey unpublished",
    surveyKey: result.surveyKey,
    unpublishedAt: result.unpublishedAt.toISOString(),
    versionsUnpublished: result.versionsUnpublished,
  };
}
