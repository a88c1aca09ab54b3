import { z } from "@hono/zod-openapi";
import type { RuleFailureRecord, StoredRuleFailure } from "@studyflow/domain/events";

const outcome = z.enum(["rule-skipped", "action-skipped", "event-rejected"]).openapi({
  description:
    "rule-skipped: the rule's changes were dropped and the event went on; action-skipped: an action " +
    "inside IFTHEN was dropped, the rule's other actions stand; event-rejected: nothing of the event was stored",
});

/** A rule that failed for this request's event; the event itself succeeded. */
export const ruleWarningSchema = z
  .object({
    eventType: z.string().openapi({ example: "SUBMIT" }),
    ruleIndex: z.number().int(),
    path: z.string().openapi({ example: "rules[2].data[1].exp" }),
    message: z.string(),
    outcome,
  })
  .openapi("RuleWarning");

/** Added to the success body of every participant event. */
export const warningsField = {
  warnings: z.array(ruleWarningSchema).openapi({
    description: "rules that failed for this event and were skipped; the event's data was kept",
  }),
};

export function presentWarnings(failures: readonly RuleFailureRecord[]): z.infer<typeof ruleWarningSchema>[] {
  return failures.map((failure) => ({
    eventType: failure.eventType,
    ruleIndex: failure.ruleIndex,
    path: failure.path,
    message: failure.message,
    outcome: failure.outcome,
  }));
}

export const ruleFailureSchema = z
  .object({
    id: z.string(),
    participantId: z.string(),
    eventType: z.string(),
    eventKey: z.string().openapi({ description: "the survey of a SUBMIT, the key of a CUSTOM event" }),
    rulesVersion: z.number().int().nullable().openapi({ description: "null for a bulk task's own rules" }),
    taskId: z.string().nullable(),
    ruleIndex: z.number().int(),
    path: z.string(),
    message: z.string(),
    outcome,
    occurredAt: z.string().openapi({ description: "ISO 8601" }),
  })
  .openapi("RuleFailure");

export function presentRuleFailure(row: StoredRuleFailure): z.infer<typeof ruleFailureSchema> {
  return {
    id: row.id,
    participantId: row.participantId,
    eventType: row.eventType,
    eventKey: row.eventKey,
    rulesVersion: row.rulesVersion,
    taskId: row.taskId,
    ruleIndex: row.ruleIndex,
    path: row.path,
    message: row.message,
    outcome: row.outcome,
    occurredAt: row.occurredAt.toISOString(),
  };
}
