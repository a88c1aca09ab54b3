import { and, eq } from "drizzle-orm";
import type { EventType } from "@studyflow/engine";
import { studyRules, type Executor, type RunActionsInput, type TimerTickInput } from "@studyflow/db";
import type { TaskRow } from "./task-row";

/** Who a timer tick's task names as its creator. */
export const TIMER_TASK_CREATOR = "study-timer";

export type TimerTaskRow = TaskRow & { kind: "timer"; input: TimerTickInput };
export type RunActionsTaskRow = TaskRow & { kind: "run-actions"; input: RunActionsInput };

export function isTimerTask(task: TaskRow): task is TimerTaskRow {
  return task.kind === "timer";
}

/** What the bulk pipeline runs for a task: the rules, the event they see, and how a failing rule is taken. */
export interface TaskRuleSet {
  rules: unknown[];
  eventType: Extract<EventType, "CUSTOM" | "TIMER">;
  /**
   * A failing top-level rule: a researcher's run-actions leave that participant as it was and
   * report it ("stop"); a timer tick skips the rule and runs the later ones, as the reference's
   * timer does ("continue").
   */
  onRuleError: "stop" | "continue";
  dryRun: boolean;
  /** The study rules version a tick runs; null for a researcher's own rules. */
  rulesVersion: number | null;
}

/**
 * The rule set of a task. A tick runs the study rules version it was created with, read from
 * study_rules: versions are immutable, so every chunk, and a chunk resumed after a crash, runs the
 * same rules.
 */
export async function taskRuleSet(db: Executor, task: TaskRow): Promise<TaskRuleSet> {
  if (!isTimerTask(task)) {
    const input = task.input as RunActionsInput;
    return { rules: input.rules, eventType: "CUSTOM", onRuleError: "stop", dryRun: input.dryRun, rulesVersion: null };
  }
  const version = task.input.rulesVersion;
  const [stored] = await db
    .select({ rules: studyRules.rules })
    .from(studyRules)
    .where(and(eq(studyRules.studyKey, task.studyKey), eq(studyRules.version, version)))
    .limit(1);
  if (!stored) throw new Error(`rules version ${version} of study "${task.studyKey}" does not exist`);
  return { rules: stored.rules, eventType: "TIMER", onRuleError: "continue", dryRun: false, rulesVersion: version };
}
