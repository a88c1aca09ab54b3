import { and, asc, eq } from "drizzle-orm";
import {
  apiKeys,
  appRoles,
  serviceAccounts,
  type Database,
  type Executor,
  type PermissionLimiter,
} from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Invalid, NotFound } from "../errors";
import {
  deleteAllSubjectPermissions,
  deleteSubjectPermission,
  insertSubjectPermission,
  listSubjectPermissions,
  updateSubjectPermissionLimiter,
  type NewPermission,
  type PermissionRow,
} from "./permissions";

/**
 * Service accounts (case-backend's service users): machines calling the management API with API
 * keys. Their permissions are rows of subject type `service-account` naming the account's id,
 * which is also the subject of their keys. Admins keep them.
 */

export type ServiceAccountRow = typeof serviceAccounts.$inferSelect;

export interface ServiceAccountProps {
  label: string;
  description?: string;
}

const MAX_LABEL_LENGTH = 200;
const MAX_DESCRIPTION_LENGTH = 2000;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isServiceAccountId = (id: string) => UUID_PATTERN.test(id);

function checkedProps(props: ServiceAccountProps): { label: string; description: string } {
  const label = props.label.trim();
  if (label === "") throw new Invalid("label: required");
  if (label.length > MAX_LABEL_LENGTH) throw new Invalid(`label: longer than ${MAX_LABEL_LENGTH} characters`);
  const description = (props.description ?? "").trim();
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    throw new Invalid(`description: longer than ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  return { label, description };
}

export async function listServiceAccounts(db: Executor): Promise<ServiceAccountRow[]> {
  return db.select().from(serviceAccounts).orderBy(asc(serviceAccounts.createdAt), asc(serviceAccounts.id));
}

export async function readServiceAccount(db: Executor, id: string): Promise<ServiceAccountRow> {
  if (!isServiceAccountId(id)) throw new NotFound(`no service account "${id}"`);
  const [row] = await db.select().from(serviceAccounts).where(eq(serviceAccounts.id, id)).limit(1);
  if (!row) throw new NotFound(`no service account "${id}"`);
  return row;
}

/**
 * The account, locked against deletion for the rest of `tx`, or `missing` thrown (case-backend
 * answers an unknown account 400 where the account is the target of a creation).
 */
export async function lockServiceAccount(
  tx: Executor,
  id: string,
  missing: () => Error = () => new NotFound(`no service account "${id}"`),
): Promise<ServiceAccountRow> {
  const [row] = isServiceAccountId(id)
    ? await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, id)).for("share").limit(1)
    : [];
  if (!row) throw missing();
  return row;
}

export async function createServiceAccount(
  db: Database,
  props: ServiceAccountProps,
  by: string,
  now: Date,
): Promise<ServiceAccountRow> {
  const { label, description } = checkedProps(props);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(serviceAccounts)
      .values({ label, description, createdBy: by, createdAt: now })
      .returning();
    if (!row) throw new Error("service account insert returned nothing");
    await recordAudit(
      tx,
      { studyKey: null, actor: by, action: "service-account.create", target: row.id, details: { label, description } },
      now,
    );
    return row;
  });
}

export async function updateServiceAccount(
  db: Database,
  id: string,
  props: ServiceAccountProps,
  by: string,
  now: Date,
): Promise<ServiceAccountRow> {
  const { label, description } = checkedProps(props);
  if (!isServiceAccountId(id)) throw new NotFound(`no service account "${id}"`);
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, id)).for("update").limit(1);
    if (!before) throw new NotFound(`no service account "${id}"`);
    const [row] = await tx
      .update(serviceAccounts)
      .set({ label, description })
      .where(eq(serviceAccounts.id, id))
      .returning();
    if (!row) throw new NotFound(`no service account "${id}"`);
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "service-account.update",
        target: id,
        details: { from: { label: before.label, description: before.description }, to: { label, description } },
      },
      now,
    );
    return row;
  });
}

/**
 * Deletes an account with its API keys, permissions and app roles in one transaction; its keys
 * stop working at once (their kept lookups are forgotten here and announced to other processes).
 */
export async function deleteServiceAccount(
  db: Database,
  id: string,
  by: string,
  now: Date,
): Promise<{ apiKeys: number; permissions: number; appRoles: number }> {
  if (!isServiceAccountId(id)) throw new NotFound(`no service account "${id}"`);
  const { counts, keyHashes } = await db.transaction(async (tx) => {
    const [account] = await tx.select().from(serviceAccounts).where(eq(serviceAccounts.id, id)).for("update").limit(1);
    if (!account) throw new NotFound(`no service account "${id}"`);
    const keys = await tx
      .delete(apiKeys)
      .where(eq(apiKeys.serviceAccountId, id))
      .returning({ id: apiKeys.id, keyHash: apiKeys.keyHash });
    const permissionCount = await deleteAllSubjectPermissions(tx, { subjectType: "service-account", subjectId: id });
    const roles = await tx
      .delete(appRoles)
      .where(and(eq(appRoles.subjectType, "service-account"), eq(appRoles.subjectId, id)))
      .returning({ id: appRoles.id });
    await tx.delete(serviceAccounts).where(eq(serviceAccounts.id, id));
    const removed = { apiKeys: keys.length, permissions: permissionCount, appRoles: roles.length };
    await recordAudit(
      tx,
      {
        studyKey: null,
        actor: by,
        action: "service-account.delete",
        target: id,
        details: { label: account.label, ...removed },
      },
      now,
    );
    return { counts: removed, keyHashes: keys.map((key) => key.keyHash) };
  });
  for (const hash of keyHashes) forgetCached(db, "api-key", hash);
  forgetCached(db, "grants", id);
  return counts;
}

const accountSubject = (id: string) => ({ subjectType: "service-account", subjectId: id }) as const;

export async function listServiceAccountPermissions(db: Executor, id: string): Promise<PermissionRow[]> {
  await readServiceAccount(db, id);
  return listSubjectPermissions(db, accountSubject(id));
}

/** Grants an account a permission; an unknown account is Invalid, as case-backend answers it (400). */
export async function grantServiceAccountPermission(
  db: Database,
  id: string,
  input: NewPermission,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  const row = await db.transaction(async (tx) => {
    await lockServiceAccount(tx, id, () => new Invalid("service account not found"));
    return insertSubjectPermission(tx, accountSubject(id), input, by, now);
  });
  forgetCached(db, "grants", id);
  return row;
}

export async function revokeServiceAccountPermission(
  db: Database,
  id: string,
  permissionId: string,
  by: string,
  now: Date,
): Promise<void> {
  await deleteSubjectPermission(db, accountSubject(id), permissionId, by, now);
}

/** Replaces the limiter of one of the account's permissions (NotFound when it is not the account's). */
export async function setServiceAccountPermissionLimiter(
  db: Database,
  id: string,
  permissionId: string,
  limiter: PermissionLimiter | null,
  by: string,
  now: Date,
): Promise<PermissionRow> {
  return updateSubjectPermissionLimiter(db, accountSubject(id), permissionId, limiter, by, now);
}
