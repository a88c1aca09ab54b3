import type { ExportTaskKind, StudyAction, TaskKind } from "@studyflow/db";

/**
 * The three export groups of the data-exporter (`…/responses`, `…/participants`, `…/reports`): the
 * task kind each one starts and follows, and the permission it requires (CASE's actions). A task
 * is seen only through its own group: a participants export under …/responses/task/{id} is 404.
 */
export interface ExportGroup {
  /** The path segment below data-exporter. */
  path: "responses" | "participants" | "reports";
  kind: ExportTaskKind;
  permission: StudyAction;
  /** What the group exports, for messages. */
  noun: string;
  /**
   * Other task kinds whose status the group's task route shows, with the permission each needs:
   * case-admin follows a run-actions task at data-exporter/participants/task/{id} (case-backend
   * finds any task of the instance there).
   */
  alsoFollows?: Partial<Record<TaskKind, StudyAction>>;
}

export const EXPORT_GROUPS = {
  responses: { path: "responses", kind: "export-responses", permission: "get-responses", noun: "responses" },
  participants: {
    path: "participants",
    kind: "export-participants",
    permission: "get-participant-states",
    noun: "participants",
    alsoFollows: { "run-actions": "run-study-action" },
  },
  reports: { path: "reports", kind: "export-reports", permission: "get-reports", noun: "reports" },
} as const satisfies Record<string, ExportGroup>;

export const EXPORT_GROUP_LIST: readonly ExportGroup[] = Object.values(EXPORT_GROUPS);
