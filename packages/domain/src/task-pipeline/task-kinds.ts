import type { TaskKind } from "@studyflow/db";
import { participantExportKind } from "../exports/participant-export";
import { reportExportKind } from "../exports/report-export";
import { responseExportKind } from "../exports/response-export";
import { previousResponsesKind } from "../bulk/previous-responses-kind";
import { runActionsKind, timerTickKind } from "../bulk/run-actions-kind";
import type { TaskKindDefinition, TaskKindTable } from "../tasks/task-kind";

/**
 * Every task kind the chunk pipeline runs, by the name stored in tasks.kind. A new kind is one file
 * with its definition (plan, batch step, finalise) and one line here; the record type makes a kind
 * named in the schema but missing here a compile error.
 */
export const TASK_KIND_TABLE: TaskKindTable = {
  "run-actions": runActionsKind,
  "run-actions-previous-responses": previousResponsesKind,
  timer: timerTickKind,
  "export-responses": responseExportKind,
  "export-participants": participantExportKind,
  "export-reports": reportExportKind,
};

/** The kinds that write participants, of which one per study runs at a time (see planTask). */
export const PARTICIPANT_WRITING_KINDS = (Object.keys(TASK_KIND_TABLE) as TaskKind[]).filter(
  (kind) => TASK_KIND_TABLE[kind].writesParticipants,
);

export function taskKindOf(kind: string): TaskKindDefinition {
  const definition = (TASK_KIND_TABLE as Record<string, TaskKindDefinition | undefined>)[kind];
  if (!definition) throw new Error(`no task kind "${kind}"`);
  return definition;
}
