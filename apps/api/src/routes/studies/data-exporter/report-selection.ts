import { z } from "@hono/zod-openapi";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { Invalid } from "@studyflow/domain/errors";
import { caseJsonQuery, unixSecondsQuery } from "./case-query";

/** The query case-admin's report exporter sends: a report key, a participant, a time window. */
export const selectionQuery = {
  reportKey: z.string().max(200).optional().openapi({ description: "only reports with this key", example: "symptoms" }),
  pid: z.string().max(200).optional().openapi({ description: "only this participant's reports" }),
  from: unixSecondsQuery("from", "only reports with timestamp ≥ from (Unix seconds)"),
  until: unixSecondsQuery("until", "only reports with timestamp ≤ until (Unix seconds)"),
  filter: caseJsonQuery("filter", "CASE's Mongo-style filter on key, participantID, responseID, timestamp, data"),
};

/** The selection part of the query, as zod reads it. */
export type Selection = {
  reportKey?: string | undefined;
  pid?: string | undefined;
  from?: number | undefined;
  until?: number | undefined;
  filter?: string | undefined;
};

/**
 * The query as one Mongo-style filter and the report key, as case-backend merges them (pid →
 * participantID, from/until → a timestamp range), so that the count and the export select alike.
 */
export function reportSelection(query: Selection): { reportKey?: string; filter?: unknown } {
  if (query.from !== undefined && query.until !== undefined && query.from > query.until) {
    throw new Invalid(`from (${query.from}) is after until (${query.until})`);
  }
  const parts: unknown[] = [];
  const filter = parseCaseJsonParam("filter", query.filter);
  if (filter !== undefined) parts.push(filter);
  if (query.pid) parts.push({ participantID: query.pid });
  const window: Record<string, number> = {};
  if (query.from !== undefined) window["$gte"] = query.from;
  if (query.until !== undefined) window["$lte"] = query.until;
  if (Object.keys(window).length > 0) parts.push({ timestamp: window });
  return {
    ...(query.reportKey ? { reportKey: query.reportKey } : {}),
    ...(parts.length === 0 ? {} : { filter: parts.length === 1 ? parts[0] : { $and: parts } }),
  };
}
