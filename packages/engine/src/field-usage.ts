// Which participant fields a rule set can touch, from the registry's declarations. A bulk run loads
// only those columns, so an answer that is too small loses data: whatever is not known for sure
// counts as using everything.
import { SUBMISSION_RECORD_FIELDS } from "./compiler";
import type { ParticipantFieldUsage } from "./function-spec";
import { PARTICIPANT_FIELDS } from "./participant-state";
import { actionSpec, expressionSpec } from "./registry";
import type { EventType, ParticipantField } from "./types";

export interface FieldUsageOptions {
  /**
   * The type of the events the rules will run for. Unless it is known not to be SUBMIT, the
   * lastSubmissions record every action makes on a SUBMIT event is counted.
   */
  eventType?: EventType;
}

/** The usage of a name: undefined when no spec declares it. */
function usageOf(name: string): ParticipantFieldUsage[] | undefined {
  const expression = expressionSpec(name);
  const action = actionSpec(name);
  if (!expression && !action) return undefined;
  return [expression?.participantFields, action?.participantFields].filter((u) => u !== undefined);
}

/**
 * The participant fields the rules read or write (a written field counts as used: a JSON column is
 * written whole, so it must have been loaded whole). Walks the raw rule JSON, nested arguments
 * included; an unknown name, a node without a name or a function declaring "all" uses every field.
 */
export function fieldsUsedBy(
  rules: readonly unknown[],
  options: FieldUsageOptions = {},
): ReadonlySet<ParticipantField> {
  const used = new Set<ParticipantField>();
  // false for a usage of the whole state, which ends the walk: every field is used
  const add = (usage: ParticipantFieldUsage): boolean => {
    if (usage.reads === "all" || usage.writes === "all") return false;
    for (const field of usage.reads) used.add(field);
    for (const field of usage.writes) used.add(field);
    return true;
  };
  const visit = (node: unknown): boolean => {
    if (node === null || typeof node !== "object") return true;
    const { name, data } = node as { name?: unknown; data?: unknown };
    const usages = typeof name === "string" ? usageOf(name) : undefined;
    if (!usages || !usages.every(add)) return false;
    if (!Array.isArray(data)) return true;
    return data.every((arg) => visit((arg as { exp?: unknown } | null)?.exp));
  };
  for (const rule of rules) if (!visit(rule)) return new Set(PARTICIPANT_FIELDS);
  if (rules.length > 0 && (options.eventType === undefined || options.eventType === "SUBMIT")) {
    add(SUBMISSION_RECORD_FIELDS);
  }
  return used;
}
