import { z } from "@hono/zod-openapi";
import { caseSecondsQuery } from "../../../case-compat";

/** `pid`, `from` and `until` of the report routes, as case-backend reads them. */
export const reportConditionsQuery = z.object({
  pid: z
    .string()
    .max(200, "pid is longer than 200 characters")
    .optional()
    .openapi({ description: "only this participant's reports" }),
  from: caseSecondsQuery("from", "only reports at or after this time"),
  until: caseSecondsQuery("until", "only reports at or before this time"),
});

export function reportConditions(query: z.infer<typeof reportConditionsQuery>) {
  return {
    ...(query.pid ? { participantId: query.pid } : {}),
    ...(query.from === undefined ? {} : { from: query.from }),
    ...(query.until === undefined ? {} : { until: query.until }),
  };
}
