import { boolean, customType, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import type { PermissionAction, PermissionLimiter, ResourceType, SubjectType } from "./permissions";

/** Raw bytes (sealed secrets: packages/domain/src/access/secret-box.ts). */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * People who manage studies, as an identity provider signed them in (case-admin's
 * signin-with-idp, the console's OpenID Connect sign-in). Tokens minted for them carry `sub` = id,
 * and their permissions name that id. Subjects of older tokens (CLI, an external JWKS) are not
 * rows here and keep working by their own subject.
 */
export const managementUsers = pgTable(
  "management_users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** The provider's name as the sign-in reported it (case-admin: its provider id, e.g. "ms-entra"). */
    provider: text("provider").notNull().default(""),
    /** The provider's subject of the person. */
    sub: text("sub").notNull(),
    email: text("email").notNull().default(""),
    username: text("username").notNull().default(""),
    imageUrl: text("image_url").notNull().default(""),
    /** Set at each sign-in from the provider's roles (MANAGEMENT_IDP_ADMIN_ROLE). */
    isAdmin: boolean("is_admin").notNull().default(false),
    lastLoginAt: timestamp("last_login_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("management_users_provider_sub_uq").on(t.provider, t.sub)],
);

/** Where a management session was opened: case-admin (signin-with-idp) or studyflow's console. */
export const MANAGEMENT_SESSION_KINDS = ["case-admin", "console"] as const;
export type ManagementSessionKind = (typeof MANAGEMENT_SESSION_KINDS)[number];

/**
 * A management user's sign-in session, holding the identity provider's refresh token (CASE's
 * renewToken) sealed with MANAGEMENT_SECRETS_KEY; removed when it expires.
 */
export const managementSessions = pgTable(
  "management_sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => managementUsers.id, { onDelete: "cascade" }),
    kind: text("kind").$type<ManagementSessionKind>().notNull(),
    /** The provider's refresh token, sealed (secret-box); null when the sign-in gave none. */
    renewTokenEnc: bytea("renew_token_enc"),
    /** The id of the key that sealed it (also inside the sealed bytes): rows to re-seal after a rotation. */
    keyId: text("key_id"),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("management_sessions_user_idx").on(t.userId),
    // the sweeper removes expired sessions by this index
    index("management_sessions_expires_idx").on(t.expiresAt),
  ],
);

/** A permission an app role template requires, in CASE's Permission shape without subject. */
export interface RequiredPermission {
  resourceType: ResourceType;
  resourceKey: string;
  action: PermissionAction;
  limiter?: PermissionLimiter | null;
}

/**
 * case-backend's app role templates: a role of an app (case-admin's apps name them) and the
 * permissions a subject given the role needs.
 */
export const appRoleTemplates = pgTable(
  "app_role_templates",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    appName: text("app_name").notNull(),
    role: text("role").notNull(),
    requiredPermissions: jsonb("required_permissions").$type<RequiredPermission[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("app_role_templates_app_role_uq").on(t.appName, t.role)],
);

/** Roles of apps given to subjects (management users or service accounts). */
export const appRoles = pgTable(
  "app_roles",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    subjectType: text("subject_type").$type<SubjectType>().notNull(),
    subjectId: text("subject_id").notNull(),
    appName: text("app_name").notNull(),
    role: text("role").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("app_roles_subject_role_uq").on(t.subjectType, t.subjectId, t.appName, t.role),
    index("app_roles_app_idx").on(t.appName, t.role),
  ],
);

/**
 * Machines calling the management API (case-backend's service users): their API keys are
 * `api_keys` rows with `service_account_id` (and subject = the account's id), their permissions
 * rows of subject type `service-account`.
 */
export const serviceAccounts = pgTable("service_accounts", {
  id: uuid("id").primaryKey().defaultRandom(),
  label: text("label").notNull(),
  description: text("description").notNull().default(""),
  createdBy: text("created_by").notNull(),
  createdAt: createdAt(),
});
