import { sql } from "drizzle-orm";
import { bigserial, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
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

/**
 * case-backend's study actions (pkg/permission-checker), the names case-admin grants and checks.
 * Several have an sf name above that also satisfies them (packages/domain/src/access/permissions.ts).
 */
export const CASE_STUDY_ACTIONS = [
  "create-study",
  "read-study-config",
  "update-study-props",
  "update-study-status",
  "update-notification-subscriptions",
  "update-study-rules",
  "run-study-action",
  "delete-study",
  "manage-study-code-lists",
  "manage-study-counters",
  "manage-study-variables",
  "manage-study-permissions",
  "create-survey",
  "update-survey",
  "unpublish-survey",
  "delete-survey-version",
  "get-responses",
  "delete-responses",
  "get-confidential-responses",
  "get-files",
  "delete-files",
  "create-virtual-participant",
  "edit-participant-data",
  "get-participant-states",
  "merge-participants",
  "get-reports",
  "delete-reports",
] as const;
export type CaseStudyAction = (typeof CASE_STUDY_ACTIONS)[number];

/** case-backend's user-management action (resource type `users`, key `*`). */
export const USERS_ACTIONS = ["delete-users"] as const;
export type UsersAction = (typeof USERS_ACTIONS)[number];

/** Every action a permission row may name; `*` is every action of its resource type. */
export type PermissionAction = StudyAction | CaseStudyAction | UsersAction | "*";

/** Who a permission is for: a person (management user, or a legacy token subject) or a service account. */
export const SUBJECT_TYPES = ["management-user", "service-account"] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** What a permission is about; its `study_key` column holds the resource key. */
export const RESOURCE_TYPES = ["study", "messaging", "users"] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** case-backend's messaging resource keys (their only action is `*`). */
export const MESSAGING_RESOURCE_KEYS = [
  "global-email-templates",
  "study-email-templates",
  "scheduled-emails",
  "sms-templates",
] as const;
export type MessagingResourceKey = (typeof MESSAGING_RESOURCE_KEYS)[number];

/**
 * CASE's limiter: the permission holds only for requests whose limiter information (e.g.
 * `{surveyKey: "intake"}`) one of these maps matches on every requested key. Null: unlimited.
 */
export type PermissionLimiter = Record<string, string>[];

/**
 * Rights of management subjects, as case-backend keeps them: a subject (id and type), a resource
 * (type and key; key "*" means every resource of the type), an action ("*": every action) and an
 * optional limiter. Rows from before resource types existed are study rights of management users.
 */
export const permissions = pgTable(
  "permissions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    subjectId: text("subject_id").notNull(),
    subjectType: text("subject_type").$type<SubjectType>().notNull().default("management-user"),
    resourceType: text("resource_type").$type<ResourceType>().notNull().default("study"),
    /** The resource key: a study key for resource type `study` (the column predates the other types). */
    studyKey: text("study_key").notNull(),
    action: text("action").$type<PermissionAction>().notNull(),
    limiter: jsonb("limiter").$type<PermissionLimiter>(),
    createdAt: createdAt(),
  },
  (t) => [
    // Subject first: every check reads a subject's grants. jsonb's text form is canonical (sorted
    // keys), so equal limiters hash alike.
    uniqueIndex("permissions_uq").on(
      t.subjectId,
      t.subjectType,
      t.resourceType,
      t.studyKey,
      t.action,
      sql`md5(coalesce(${t.limiter}::text, ''))`,
    ),
    // GET …/{k}/permissions and a study's deletion find a resource's grants without a scan.
    index("permissions_resource_idx").on(t.resourceType, t.studyKey),
  ],
);
