import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { studies } from "./studies";
import { tasks } from "./tasks";

export type RuleFailureOutcome = "rule-skipped" | "action-skipped" | "event-rejected";

/**
 * A study rule that failed for a participant's event. The event itself went on (the response is
 * stored, the other rules' changes kept) unless the study is strict; either way researchers can
 * list these to find the rule and the participant.
 */
export const ruleFailures = pgTable(
  "rule_failures",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    studyKey: text("study_key")
      .notNull()
      .references(() => studies.key, { onDelete: "cascade" }),
    participantId: text("participant_id").notNull(),
    /** ENTER, SUBMIT, LEAVE, MERGE, CUSTOM or TIMER. */
    eventType: text("event_type").notNull(),
    /** The survey key of a SUBMIT, the event key of a CUSTOM event, "" otherwise. */
    eventKey: text("event_key").notNull().default(""),
    /** The rules version that ran; null for a bulk task's own rules. */
    rulesVersion: integer("rules_version"),
    /** The bulk task whose rules failed, when the event was a run-actions task. */
    taskId: uuid("task_id").references(() => tasks.id, { onDelete: "set null" }),
    ruleIndex: integer("rule_index").notNull(),
    /** JSON path of the failing expression, e.g. rules[2].data[1].exp. */
    path: text("path").notNull(),
    message: text("message").notNull(),
    /**
     * What became of the failure: `rule-skipped` (the rule's changes were dropped, the event went
     * on), `action-skipped` (an action inside IFTHEN failed, the rule's other actions stand) or
     * `event-rejected` (a strict study: nothing of the event was stored).
     */
    outcome: text("outcome").$type<RuleFailureOutcome>().notNull(),
    occurredAt: timestamp("occurred_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    index("rule_failures_study_time_idx").on(t.studyKey, t.occurredAt),
    index("rule_failures_participant_idx").on(t.studyKey, t.participantId),
    // Removing a task past retention sets its failures' task_id to null: without this index every
    // removed task would scan the whole table.
    index("rule_failures_task_idx")
      .on(t.taskId)
      .where(sql`${t.taskId} is not null`),
  ],
);
