import { z } from "@hono/zod-openapi";
import { createResponseFormatter } from "@studyflow/case-export";
import type { ExplorerResponse, ExplorerSurveyVersion, ReportRow } from "@studyflow/domain/data-explorer";

/** A report as case-backend's JSON shows it. */
export const caseReportSchema = z
  .object({
    id: z.string(),
    key: z.string(),
    participantID: z.string(),
    responseID: z.string().openapi({ description: '"" when no response produced it' }),
    timestamp: z.number().int().openapi({ description: "Unix seconds" }),
    modifiedAt: z.string().openapi({
      description: "when the report was last changed; studyflow reports are never changed, so Go's zero time",
    }),
    data: z
      .array(z.object({ key: z.string(), value: z.string(), dtype: z.string().optional() }))
      .optional()
      .openapi({ description: "left out when empty, as case-backend leaves it out" }),
  })
  .openapi("CaseReport");

/** Go's zero time.Time, which case-backend writes for a report never modified (omitempty does not drop a struct). */
const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

export function presentCaseReport(row: ReportRow): z.infer<typeof caseReportSchema> {
  return {
    id: row.id,
    key: row.key,
    participantID: row.participantId,
    responseID: row.responseId ?? "",
    timestamp: row.timestamp,
    modifiedAt: GO_ZERO_TIME,
    ...(row.data.length > 0
      ? {
          data: row.data.map((item) => ({
            key: item.key,
            value: item.value,
            ...(item.dtype ? { dtype: item.dtype } : {}),
          })),
        }
      : {}),
  };
}

/** A response as the explorer shows it: one flat object, the columns of CASE's JSON export. */
export const flatResponseSchema = z.record(z.string(), z.unknown()).openapi("CaseFlatResponse", {
  description:
    "CASE's flat response object: ID, participantID, version, opened, submitted, arrivedAt, context columns, " +
    "then one entry per question slot (`<item><sep><slot>`); accountID and mainProfile when the study tracks accounts",
});

export interface FlatResponseOptions {
  shortKeys: boolean;
  questionOptionSep: string;
  extraContextColumns: string[];
  accountColumns: boolean;
  /** The request's time in Unix seconds, from which CASE's version lookup by time counts. */
  now: number;
}

/**
 * Responses as flat CASE objects, through the exporter's JSON format (the one case-backend's
 * data explorer and JSON export share), so the explorer and the export files agree column for column.
 */
export function flattenResponses(
  surveyKey: string,
  versions: ExplorerSurveyVersion[],
  responses: readonly ExplorerResponse[],
  options: FlatResponseOptions,
): Record<string, unknown>[] {
  if (responses.length === 0) return [];
  const formatter = createResponseFormatter(surveyKey, versions, {
    format: "json",
    questionOptionSep: options.questionOptionSep,
    shortKeys: options.shortKeys,
    extraContextColumns: options.extraContextColumns,
    includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
    accountColumns: options.accountColumns,
    now: options.now,
  });
  const text = formatter.start() + formatter.format(responses, false).text + formatter.end(true);
  return (JSON.parse(text) as { responses: Record<string, unknown>[] }).responses;
}
