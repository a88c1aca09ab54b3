import { and, asc, eq } from "drizzle-orm";
import {
  isUniqueViolation,
  appRoleTemplates,
  appRoles,
  managementUsers,
  permissions,
  type Database,
  type Executor,
  type RequiredPermission,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Conflict, Invalid, NotFound } from "../errors";
import { checkedPermission, type NewPermission, type PermissionSubject } from "./permissions";

/**
 * case-backend's app roles: templates naming a role of an app (case-admin's apps read them) with
 * the permissions the role needs; giving a management user a role from a template grants each of
 * those permissions the user lacks. Removing a role keeps the permissions it granted (as
 * case-backend does); deleting a template removes the roles made from it.
 */

export type AppRoleRow = typeof appRoles.$inferSelect;
export type AppRoleTemplateRow = typeof appRoleTemplates.$inferSelect;

export interface AppRoleTemplateInput {
  appName: string;
  role: string;
  requiredPermissions?: readonly NewPermission[] | null;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_NAME_LENGTH = 200;
const MAX_REQUIRED_PERMISSIONS = 200;

function checkedName(value: string, field: string): string {
  const name = value.trim();
  if (name === "") throw new Invalid(`${field}: required`);
  if (name.length > MAX_NAME_LENGTH) throw new Invalid(`${field}: longer than ${MAX_NAME_LENGTH} characters`);
  return name;
}

function checkedTemplate(input: AppRoleTemplateInput) {
  const appName = checkedName(input.appName, "appName");
  const role = checkedName(input.role, "role");
  const required = input.requiredPermissions ?? [];
  if (required.length > MAX_REQUIRED_PERMISSIONS) {
    throw new Invalid(`requiredPermissions: at most ${MAX_REQUIRED_PERMISSIONS}`);
  }
  const requiredPermissions: RequiredPermission[] = required.map((permission, index) => {
    try {
      const checked = checkedPermission(permission);
      return {
        resourceType: checked.resourceType,
        resourceKey: checked.resourceKey,
        action: checked.action,
        ...(checked.limiter ? { limiter: checked.limiter } : {}),
      };
    } catch (error) {
      if (error instanceof Invalid) throw new Invalid(`requiredPermissions[${index}].${error.message}`);
      throw error;
    }
  });
  return { appName, role, requiredPermissions };
}

async function userExists(tx: Executor, userId: string): Promise<boolean> {
  if (!UUID_PATTERN.test(userId)) return false;
  const [user] = await tx
    .select({ id: managementUsers.id })
    .from(managementUsers)
    .where(eq(managementUsers.id, userId))
    .for("share")
    .limit(1);
  return user !== undefined;
}

/** The app roles of a subject (a management user or a service account), oldest first. */
export async function listSubjectAppRoles(db: Executor, who: PermissionSubject): Promise<AppRoleRow[]> {
  return db
    .select()
    .from(appRoles)
    .where(and(eq(appRoles.subjectType, who.subjectType), eq(appRoles.subjectId, who.subjectId)))
    .orderBy(asc(appRoles.createdAt), asc(appRoles.id));
}

/** A management user's app roles (NotFound for an unknown user). */
export async function listManagementUserAppRoles(db: Executor, userId: string): Promise<AppRoleRow[]> {
  if (!(await userExists(db, userId))) throw new NotFound(`no management user "${userId}"`);
  return listSubjectAppRoles(db, { subjectType: "management-user", subjectId: userId });
}

/**
 * Gives a management user the role of a template and, in the same transaction, each of the
 * template's permissions the user lacks (a grant of the same resource with the action or "*"
 * counts as had). Unknown user: Invalid (case-backend's 400); unknown template: NotFound; a role
 * the user has: Conflict.
 */
export async function addManagementUserAppRole(
  db: Database,
  userId: string,
  templateId: string,
  by: string,
  now: Date,
): Promise<{ appRole: AppRoleRow; granted: number }> {
  const result = await db.transaction(async (tx) => {
    if (!(await userExists(tx, userId))) throw new Invalid("user not found");
    const [template] = UUID_PATTERN.test(templateId)
      ? await tx.select().from(appRoleTemplates).where(eq(appRoleTemplates.id, templateId)).for("share").limit(1)
      : [];
    if (!template) throw new NotFound(`no app role template "${templateId}"`);
    const [appRole] = await tx
      .insert(appRoles)
      .values({
        subjectType: "management-user",
        subjectId: userId,
        appName: template.appName,
        role: template.role,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (!appRole) throw new Conflict(`the user already has role "${template.role}" of app "${template.appName}"`);
    const held = await tx
      .select({ resourceType: permissions.resourceType, studyKey: permissions.studyKey, action: permissions.action })
      .from(permissions)
      .where(and(eq(permissions.subjectType, "management-user"), eq(permissions.subjectId, userId)));
    let granted = 0;
    for (const required of template.requiredPermissions) {
      const has = held.some(
        (grant) =>
          grant.resourceType === required.resourceType &&
          grant.studyKey === required.resourceKey &&
          (grant.action === required.action || grant.action === "*"),
      );
      if (has) continue;
      const inserted = await tx
        .insert(permissions)
        .values({
          subjectType: "management-user",
          subjectId: userId,
          resourceType: required.resourceType,
          studyKey: required.resourceKey,
          action: required.action,
          limiter: required.limiter && required.limiter.length > 0 ? required.limiter : null,
          createdAt: now,
        })
        .onConflictDoNothing()
        .returning({ id: permissions.id });
      granted += inserted.length;
      held.push({ resourceType: required.resourceType, studyKey: required.resourceKey, action: required.action });
    }
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "app-role.add",
        target: appRole.id,
        details: { userId, templateId, appName: template.appName, role: template.role, permissionsGranted: granted },
      },
      now,
    );
    return { appRole, granted };
  });
  forgetCached(db, "grants", userId);
  return result;
}

/** Removes one of a management user's app roles (NotFound when it is not theirs); its permissions stay. */
export async function removeManagementUserAppRole(
  db: Database,
  userId: string,
  appRoleId: string,
  by: string,
  now: Date,
): Promise<void> {
  if (!UUID_PATTERN.test(appRoleId)) throw new NotFound(`the user has no app role "${appRoleId}"`);
  await db.transaction(async (tx) => {
    const [removed] = await tx
      .delete(appRoles)
      .where(
        and(eq(appRoles.id, appRoleId), eq(appRoles.subjectType, "management-user"), eq(appRoles.subjectId, userId)),
      )
      .returning();
    if (!removed) throw new NotFound(`the user has no app role "${appRoleId}"`);
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "app-role.remove",
        target: appRoleId,
        details: { userId, appName: removed.appName, role: removed.role },
      },
      now,
    );
  });
}

/** Every app role of every subject, by app, role and age. */
export async function listAppRoles(db: Executor): Promise<AppRoleRow[]> {
  return db
    .select()
    .from(appRoles)
    .orderBy(asc(appRoles.appName), asc(appRoles.role), asc(appRoles.createdAt), asc(appRoles.id));
}

/**
 * Removes every app role of an app, whoever holds it; the app's templates and the permissions the
 * roles granted stay (as case-backend). An app without roles is done already.
 */
export async function deleteAppRolesForApp(db: Database, appName: string, by: string, now: Date): Promise<number> {
  const app = checkedName(appName, "appName");
  return db.transaction(async (tx) => {
    const removed = await removeRolesOfApp(tx, app);
    await recordAudit(
      tx,
      { studyKey: null, actor: by, action: "app-role.delete-for-app", target: app, details: { appRoles: removed } },
      now,
    );
    return removed;
  });
}

async function removeRolesOfApp(tx: Executor, appName: string): Promise<number> {
  const roles = await tx.delete(appRoles).where(eq(appRoles.appName, appName)).returning({ id: appRoles.id });
  return roles.length;
}

export async function listAppRoleTemplates(db: Executor): Promise<AppRoleTemplateRow[]> {
  return db
    .select()
    .from(appRoleTemplates)
    .orderBy(asc(appRoleTemplates.appName), asc(appRoleTemplates.role), asc(appRoleTemplates.id));
}

export async function readAppRoleTemplate(db: Executor, id: string): Promise<AppRoleTemplateRow> {
  const [row] = UUID_PATTERN.test(id)
    ? await db.select().from(appRoleTemplates).where(eq(appRoleTemplates.id, id)).limit(1)
    : [];
  if (!row) throw new NotFound(`no app role template "${id}"`);
  return row;
}

/** Creates a template; a template of the same app and role is a Conflict. */
export async function createAppRoleTemplate(
  db: Database,
  input: AppRoleTemplateInput,
  by: string,
  now: Date,
): Promise<AppRoleTemplateRow> {
  const template = checkedTemplate(input);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(appRoleTemplates)
      .values({ ...template, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning();
    if (!row) throw new Conflict(`app "${template.appName}" already has a template for role "${template.role}"`);
    await recordAudit(
      tx,
      { studyKey: null, actor: by, action: "app-role-template.create", target: row.id, details: template },
      now,
    );
    return row;
  });
}

/** Replaces a template's app, role and permissions; roles and permissions given earlier stay as they are. */
export async function updateAppRoleTemplate(
  db: Database,
  id: string,
  input: AppRoleTemplateInput,
  by: string,
  now: Date,
): Promise<AppRoleTemplateRow> {
  const template = checkedTemplate(input);
  try {
    return await db.transaction(async (tx) => {
      const before = await readAppRoleTemplate(tx, id);
      const [row] = await tx
        .update(appRoleTemplates)
        .set({ ...template, updatedAt: now })
        .where(eq(appRoleTemplates.id, id))
        .returning();
      if (!row) throw new NotFound(`no app role template "${id}"`);
      await recordAudit(
        tx,
        {
          studyKey: null,
          actor: by,
          action: "app-role-template.update",
          target: id,
          details: {
            from: { appName: before.appName, role: before.role, requiredPermissions: before.requiredPermissions },
            to: template,
          },
        },
        now,
      );
      return row;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new Conflict(`app "${template.appName}" already has a template for role "${template.role}"`);
    }
    throw error;
  }
}

/** Deletes a template and every app role of its app and role, in one transaction. */
export async function deleteAppRoleTemplate(db: Database, id: string, by: string, now: Date): Promise<number> {
  if (!UUID_PATTERN.test(id)) throw new NotFound(`no app role template "${id}"`);
  return db.transaction(async (tx) => {
    const [template] = await tx.delete(appRoleTemplates).where(eq(appRoleTemplates.id, id)).returning();
    if (!template) throw new NotFound(`no app role template "${id}"`);
    const roles = await tx
      .delete(appRoles)
      .where(and(eq(appRoles.appName, template.appName), eq(appRoles.role, template.role)))
      .returning({ id: appRoles.id });
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "app-role-template.delete",
        target: id,
        details: { appName: template.appName, role: template.role, appRolesRemoved: roles.length },
      },
      now,
    );
    return roles.length;
  });
}

/**
 * Deletes every template of an app and every app role of the app, in one transaction. An app
 * without templates or roles is done already (case-backend answers it alike).
 */
export async function deleteAppRoleTemplatesForApp(
  db: Database,
  appName: string,
  by: string,
  now: Date,
): Promise<{ templates: number; appRoles: number }> {
  const app = checkedName(appName, "appName");
  return db.transaction(async (tx) => {
    const templates = await tx
      .delete(appRoleTemplates)
      .where(eq(appRoleTemplates.appName, app))
      .returning({ id: appRoleTemplates.id });
    const counts = { templates: templates.length, appRoles: await removeRolesOfApp(tx, app) };
    await recordAudit(
      tx,
      { studyKey: null, actor: by, action: "app-role-template.delete-for-app", target: app, details: counts },
      now,
    );
    return counts;
  });
}
