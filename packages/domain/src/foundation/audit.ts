import { auditLog, type Executor } from "@studyflow/db";

/** One management change, as the audit log keeps it. */
export interface AuditEntry {
  /** The study the change belongs to; null for changes outside any study (service keys). */
  studyKey: string | null;
  /** The management subject who made it. */
  actor: string;
  /** What was done, dotted: "study.props.update", "survey.publish", "code-list.add", … */
  action: string;
  /** What it was done to: a survey key, a code list key, a variable key, a key id. */
  target?: string;
  /** What changed; never a secret (no key, no token, no password). */
  details?: Record<string, unknown>;
}

/**
 * Records a management change. Call it in the transaction that makes the change, so the change
 * and its record commit together or not at all.
 */
export async function recordAudit(tx: Executor, entry: AuditEntry, at?: Date): Promise<void> {
  await tx.insert(auditLog).values({
    studyKey: entry.studyKey,
    actor: entry.actor,
    action: entry.action,
    target: entry.target ?? null,
    details: entry.details ?? {},
    ...(at ? { at } : {}),
  });
}
