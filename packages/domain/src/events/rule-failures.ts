import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { ApplyResult, StudyEvent } from "@studyflow/engine";
import { ruleFailures, type Database, type Executor, type RuleFailureOutcome } from "@studyflow/db";
import { Invalid, RuleFailed } from "../errors";

/** A rule that failed for one participant's event, as it is recorded for researchers. */
export interface RuleFailureRecord {
  studyKey: string;
  participantId: string;
  eventType: string;
  eventKey: string;
  /** The study rules version that ran; null for a bulk task's own rules. */
  rulesVersion: number | null;
  taskId?: string | null;
  ruleIndex: number;
  path: string;
  message: string;
  outcome: RuleFailureOutcome;
}

/** The event's key as researchers filter by it: the survey of a SUBMIT, the key of a CUSTOM event. */
export function eventKeyOf(event: StudyEvent): string {
  if (event.type === "SUBMIT") return event.response?.key ?? "";
  return event.eventKey ?? "";
}

/**
 * The failures of one rule run: failed rules (skipped, or rejecting the event) and the IFTHEN
 * actions that were skipped while their rule went on.
 */
export function failuresOf(
  result: ApplyResult,
  on: Pick<RuleFailureRecord, "studyKey" | "participantId" | "rulesVersion"> & { event: StudyEvent; taskId?: string },
  ruleOutcome: "rule-skipped" | "event-rejected",
): RuleFailureRecord[] {
  const base = {
    studyKey: on.studyKey,
    participantId: on.participantId,
    eventType: on.event.type,
    eventKey: eventKeyOf(on.event),
    rulesVersion: on.rulesVersion,
    ...(on.taskId ? { taskId: on.taskId } : {}),
  };
  return [
    // the engine's "rule N: " prefix repeats ruleIndex; records read alike for rules and actions
    ...(result.errors ?? []).map((error) => ({
      ...base,
      ...error,
      message: error.message.replace(/^rule \d+: /, ""),
      outcome: ruleOutcome,
    })),
    ...(result.skippedActions ?? []).map((skipped) => ({ ...base, ...skipped, outcome: "action-skipped" as const })),
  ];
}

export async function recordRuleFailures(
  db: Executor,
  failures: readonly RuleFailureRecord[],
  at: Date,
): Promise<void> {
  if (failures.length === 0) return;
  await db.insert(ruleFailures).values(failures.map((failure) => ({ ...failure, occurredAt: at })));
}

/**
 * A strict study's rules failed: the event is rejected (422) and nothing of it stored; the
 * failures are recorded afterwards, outside the rolled-back transaction.
 */
export class RulesRejectedEvent extends RuleFailed {
  constructor(readonly failures: readonly RuleFailureRecord[]) {
    const first = failures[0];
    super(
      first
        ? `study rules failed on ${first.eventType} (rule ${first.ruleIndex} at ${first.path}): ${first.message}`
        : "study rules failed",
    );
  }
}

export interface RuleFailureQuery {
  studyKey: string;
  participantId?: string;
  eventType?: string;
  taskId?: string;
  /** Only failures at or after this instant. */
  since?: Date;
  /** Only failures older than this one (paging: the last failure of the previous page). */
  before?: { occurredAt: Date; id: string };
  limit: number;
}

export type StoredRuleFailure = typeof ruleFailures.$inferSelect;

/** PostgreSQL's timestamps reach years 4713 BC to 294276 AD; ISO 8601 without extensions, 0001–9999. */
const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00.000Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

function checkInstant(name: string, at: Date): void {
  const ms = at.getTime();
  if (Number.isNaN(ms) || ms < FIRST_INSTANT || ms > LAST_INSTANT) {
    throw new Invalid(`${name} must be a date-time in the years 0001 to 9999`);
  }
}

/** Most recent first. */
export async function listRuleFailures(db: Database, query: RuleFailureQuery): Promise<StoredRuleFailure[]> {
  if (query.since !== undefined) checkInstant("since", query.since);
  if (query.before !== undefined) checkInstant("cursor", query.before.occurredAt);
  const conditions = [eq(ruleFailures.studyKey, query.studyKey)];
  if (query.participantId !== undefined) conditions.push(eq(ruleFailures.participantId, query.participantId));
  if (query.eventType !== undefined) conditions.push(eq(ruleFailures.eventType, query.eventType));
  if (query.taskId !== undefined) conditions.push(eq(ruleFailures.taskId, query.taskId));
  if (query.since !== undefined) conditions.push(gte(ruleFailures.occurredAt, query.since));
  if (query.before !== undefined) {
    // failures of one event share their instant: the id breaks the tie, so a page never skips one
    const { occurredAt, id } = query.before;
    conditions.push(
      sql`(${ruleFailures.occurredAt}, ${ruleFailures.id}) < (${occurredAt.toISOString()}::timestamptz, ${id}::uuid)`,
    );
  }
  return db
    .select()
    .from(ruleFailures)
    .where(and(...conditions))
    .orderBy(desc(ruleFailures.occurredAt), desc(ruleFailures.id))
    .limit(query.limit);
}
