import type { ExportTaskKind, StudyAction } from "@studyflow/db";

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
}

export const EXPORT_GROUPS = {
  responses: { path: "responses", kind: "export-responses", permission: "get-responses", noun: "responses" },
  participants: {
    path: "participants",
    kind: "export-participants",
    permission: "get-participant-states",
    noun: "participants",
  },
  reports: { path: "reports", kind: "export-reports", permission: "get-reports", noun: "reports" },
} as const satisfies Record<string, ExportGroup>;

export const EXPORT_GROUP_LIST: readonly ExportGroup[] = Object.values(EXPORT_GROUPS);
