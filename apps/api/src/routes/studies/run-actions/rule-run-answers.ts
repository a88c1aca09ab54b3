import type { z } from "@hono/zod-openapi";
import { errorResponses } from "../../openapi-errors";
import { jsonContent } from "../../schemas";
import { participantRunResultSchema } from "./case-rules";

/** The answers of a start of a rule task on every participant; each route words its invalid body. */
export const startRuleTaskResponses = <T extends z.ZodType>(envelope: T, invalidBody: string) => ({
  200: jsonContent(envelope, "task created and queued"),
  ...errorResponses([400, 401, 403, 404, 503], {
    400: invalidBody,
    404: "study not found",
    503: "the job queue is unavailable",
  }),
});

/** The answers of a run of rules on one participant, at once; each route words what ran and what failed. */
export const participantRunResponses = (ran: string, invalidBody: string, ruleFailed: string) => ({
  200: jsonContent(participantRunResultSchema, ran),
  ...errorResponses([400, 401, 403, 404, 409, 422], {
    400: invalidBody,
    404: "study not found",
    409: "the participant was changed by another request at the same time; retry",
    422: ruleFailed,
  }),
});

/** A run on one participant in case-backend's shape. */
export const participantRunAnswer = (result: {
  participantCount: number;
  durationSeconds: number;
  changedPerRule: number[];
}) => ({
  participantCount: result.participantCount,
  duration: result.durationSeconds,
  ruleResults: result.changedPerRule,
});
