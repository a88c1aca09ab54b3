import { bigserial, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

/** Every per-study right, one per kind of management work. */
export const STUDY_ACTIONS = [
  "edit-participant-data",
  "run-study-action",
  /** properties, status, track-account flag, study configuration */
  "update-study-props",
  "read-rule-failures",
  /** upload, list, fetch and unpublish survey definitions */
  "manage-surveys",
  /** add, list, count and remove codes of the study's code lists */
  "manage-code-lists",
  /** define, read, set and delete study variables */
  "manage-study-variables",
  /** list, fetch and set the study's rules versions */
  "manage-rules",
  /** read the study's audit log */
  "read-audit-log",
  /** the study timer's schedule, pause and resume */
  "manage-timer",
  /** the e-mail templates of participant messages */
  "manage-message-templates",
  /** who receives the study's researcher notifications */
  "manage-subscriptions",
  /** read the study configuration needed to read its data: export config, survey codebooks (CASE's read-study-config) */
  "read-study-config",
  /** export and browse survey responses (CASE's get-responses) */
  "get-responses",
  /** delete survey responses in the data explorer (CASE's delete-responses) */
  "delete-responses",
  /** export and browse participant states (CASE's get-participant-states) */
  "get-participant-states",
  /** export and browse reports (CASE's get-reports) */
  "get-reports",
  /** export confidential responses (CASE's get-confidential-responses): kept apart from get-responses */
  "get-confidential-responses",
] as const;
export type StudyAction = (typeof STUDY_ACTIONS)[number];

/** Per-study rights of management subjects; studyKey "*" means every study. */
export const permissions = pgTable(
  "permissions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    subjectId: text("subject_id").notNull(),
    studyKey: text("study_key").notNull(),
    action: text("action").$type<StudyAction | "*">().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("permissions_uq").on(t.subjectId, t.studyKey, t.action)],
);
