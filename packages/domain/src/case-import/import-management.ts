import { and, eq, sql } from "drizzle-orm";
import {
  apiKeys,
  appRoles,
  appRoleTemplates,
  managementUsers,
  permissions,
  RESOURCE_TYPES,
  serviceAccounts,
  SUBJECT_TYPES,
  type Executor,
  type PermissionAction,
  type PermissionLimiter,
  type RequiredPermission,
  type ResourceType,
  type SubjectType,
} from "@studyflow/db";
import { MAX_API_KEY_DAYS, hashApiKey, isCaseApiKey } from "../access/api-keys";
import type { ClockContext } from "../foundation/clock";
import {
  asArray,
  asRecord,
  asString,
  caseAccountUuid,
  documentId,
  isObjectIdHex,
  type CaseDocument,
} from "./case-values";
import {
  absentApiKeys,
  absentAppRoleTemplates,
  absentAppRoles,
  absentManagementUsers,
  absentPermissions,
  absentServiceAccounts,
} from "./import-absent";
import { IMPORT_ACTOR, skipped, type CollectionImporter, type DocumentOutcome } from "./import-batch";
import { findDumpCollection, type DumpCollectionFile } from "./dump-reader";
import { goTime, importedTarget, importRecordedRow, type RecordedRow } from "./import-record";

/**
 * The management side of a CASE instance (`<prefix><instance>_users`, case-backend's
 * pkg/db/management-user types): researchers, service accounts, their grants and app roles.
 * CASE names a subject by its ObjectId; studyflow by the id the import gave the row, found
 * through case_import_records (or, in a dry run, what this run decided).
 */

const SUBJECT_KINDS: Record<SubjectType, string> = {
  "management-user": "management-user",
  "service-account": "service-account",
};

/** Subjects this run decided on: a dry run writes no record, yet its grants must find them. */
export class ImportedSubjects {
  private readonly decided = new Map<string, string>();

  note(kind: string, sourceId: string, targetId: string) {
    this.decided.set(`${kind}:${sourceId}`, targetId);
  }

  async find(tx: Executor, subjectType: SubjectType, sourceId: string): Promise<string | undefined> {
    const kind = SUBJECT_KINDS[subjectType];
    return this.decided.get(`${kind}:${sourceId}`) ?? (await importedTarget(tx, kind, sourceId));
  }
}

const wasWritten = (outcome: DocumentOutcome) => outcome.kind !== "skipped";

/** `management_users`: one researcher per provider and subject, under a UUID made from its ObjectId. */
export function managementUsersImporter(
  replace: boolean,
  subjects: ImportedSubjects,
  ctx: ClockContext,
): CollectionImporter {
  return {
    absent: absentManagementUsers,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const sourceId = documentId(document);
        const sub = asString(document["sub"]);
        if (!isObjectIdHex(sourceId)) {
          outcomes.push(skipped("the researcher's _id is not an ObjectId"));
          continue;
        }
        if (sub === "") {
          outcomes.push(skipped("the researcher has no sub (the identity provider's subject)"));
          continue;
        }
        const provider = asString(document["provider"]);
        const fields = {
          provider,
          sub,
          email: asString(document["email"]),
          username: asString(document["username"]),
          imageUrl: asString(document["imageUrl"]),
          isAdmin: document["isAdmin"] === true,
          lastLoginAt: goTime(document["lastLoginAt"]),
          createdAt: goTime(document["createdAt"]) ?? new Date(0),
        };
        let decided: string | undefined;
        const row: RecordedRow = {
          kind: "management-user",
          sourceId,
          label: `a researcher signed in by ${provider || "its provider"} as ${sub}`,
          findNatural: async (db) => {
            const [found] = await db
              .select({ id: managementUsers.id })
              .from(managementUsers)
              .where(and(eq(managementUsers.provider, provider), eq(managementUsers.sub, sub)));
            decided ??= found?.id;
            return found?.id;
          },
          exists: async (db, id) => {
            const [found] = await db
              .select({ id: managementUsers.id })
              .from(managementUsers)
              .where(eq(managementUsers.id, id));
            if (found) decided = found.id;
            return found !== undefined;
          },
          insert: async (db) => {
            const id = caseAccountUuid(sourceId);
            await db.insert(managementUsers).values({ id, ...fields });
            return id;
          },
          update: async (db, id) => {
            await db.update(managementUsers).set(fields).where(eq(managementUsers.id, id));
          },
        };
        const outcome = await importRecordedRow(tx, row, bytes, write, replace, ctx);
        if (wasWritten(outcome)) subjects.note("management-user", sourceId, decided ?? caseAccountUuid(sourceId));
        outcomes.push(outcome);
      }
      return outcomes;
    },
  };
}

/** `service_users`: service accounts under a UUID made from their ObjectId. */
export function serviceUsersImporter(
  replace: boolean,
  subjects: ImportedSubjects,
  ctx: ClockContext,
): CollectionImporter {
  return {
    absent: absentServiceAccounts,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const sourceId = documentId(document);
        if (!isObjectIdHex(sourceId)) {
          outcomes.push(skipped("the service account's _id is not an ObjectId"));
          continue;
        }
        const id = caseAccountUuid(sourceId);
        const fields = {
          label: asString(document["label"]),
          description: asString(document["description"]),
          createdAt: goTime(document["createdAt"]) ?? new Date(0),
        };
        const outcome = await importRecordedRow(
          tx,
          {
            kind: "service-account",
            sourceId,
            label: `a service account ${id}`,
            findNatural: async (db) => {
              const [found] = await db
                .select({ id: serviceAccounts.id })
                .from(serviceAccounts)
                .where(eq(serviceAccounts.id, id));
              return found?.id;
            },
            exists: async (db, target) =>
              (await db.select({ id: serviceAccounts.id }).from(serviceAccounts).where(eq(serviceAccounts.id, target)))
                .length > 0,
            insert: async (db) => {
              await db.insert(serviceAccounts).values({ id, createdBy: IMPORT_ACTOR, ...fields });
              return id;
            },
            update: async (db, target) => {
              await db.update(serviceAccounts).set(fields).where(eq(serviceAccounts.id, target));
            },
          },
          bytes,
          write,
          replace,
          ctx,
        );
        if (wasWritten(outcome)) subjects.note("service-account", sourceId, id);
        outcomes.push(outcome);
      }
      return outcomes;
    },
  };
}

/**
 * `service_user_api_keys`: each key carried as studyflow keeps keys, by its SHA-256 only (case-backend
 * kept the key itself), under the service account the import gave its owner, so the machines that
 * hold a key go on calling with it (X-API-Key; verifyApiKey takes CASE's key form). A key without
 * an expiry in CASE expires MAX_API_KEY_DAYS after the import, studyflow's longest lifetime. The
 * key's text never reaches a report.
 */
export function serviceUserApiKeysImporter(subjects: ImportedSubjects, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentApiKeys,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { document } of batch) {
        const key = asString(document["key"]);
        const owner = asString(document["serviceUserId"]);
        if (!isCaseApiKey(key)) {
          outcomes.push(skipped("the key is not in case-backend's key form (39 base32 characters)"));
          continue;
        }
        const account = await subjects.find(tx, "service-account", owner);
        if (account === undefined) {
          outcomes.push(skipped(`its service account ${owner} was not imported`));
          continue;
        }
        const keyHash = hashApiKey(key);
        const [existing] = await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.keyHash, keyHash));
        if (existing) {
          outcomes.push({ kind: "unchanged" });
          continue;
        }
        const now = new Date(ctx.clock());
        const sourceId = documentId(document);
        if (write) {
          await tx.insert(apiKeys).values({
            // from CASE's id, so that every import of the same dump gives the key the same row
            ...(isObjectIdHex(sourceId) ? { id: caseAccountUuid(sourceId) } : {}),
            subject: account,
            serviceAccountId: account,
            label: "imported from CASE",
            keyHash,
            keyPrefix: key.slice(0, 6),
            createdBy: IMPORT_ACTOR,
            createdAt: goTime(document["createdAt"]) ?? now,
            expiresAt: goTime(document["expiresAt"]) ?? new Date(now.getTime() + MAX_API_KEY_DAYS * 86_400_000),
            lastUsedAt: goTime(document["lastUsedAt"]),
          });
        }
        outcomes.push({ kind: "inserted" });
      }
      return outcomes;
    },
  };
}

function limiterOf(value: unknown): PermissionLimiter | null {
  const entries = asArray(value).map((entry) =>
    Object.fromEntries(Object.entries(asRecord(entry)).map(([key, item]) => [key, asString(item)])),
  );
  return entries.length > 0 ? entries : null;
}

const isSubjectType = (value: string): value is SubjectType => (SUBJECT_TYPES as readonly string[]).includes(value);
const isResourceType = (value: string): value is ResourceType => (RESOURCE_TYPES as readonly string[]).includes(value);

interface Grant {
  resourceType: ResourceType;
  resourceKey: string;
  action: PermissionAction;
  limiter: PermissionLimiter | null;
}

/** A CASE Permission's resource, action and limiter; a text saying why not when it has none studyflow knows. */
function grantOf(document: Record<string, unknown>): Grant | string {
  // grants from before resource types existed are study grants
  const resourceType = asString(document["resourceType"]) || "study";
  if (!isResourceType(resourceType)) return `resource type "${resourceType}" is not one studyflow knows`;
  const resourceKey = asString(document["resourceKey"]);
  const action = asString(document["action"]);
  if (resourceKey === "" || action === "") return "the permission has no resourceKey or no action";
  return { resourceType, resourceKey, action: action as PermissionAction, limiter: limiterOf(document["limiter"]) };
}

async function subjectOf(
  tx: Executor,
  document: CaseDocument,
  subjects: ImportedSubjects,
): Promise<{ subjectType: SubjectType; subjectId: string } | string> {
  const subjectType = asString(document["subjectType"]) || "management-user";
  if (!isSubjectType(subjectType)) return `subject type "${subjectType}" is not one studyflow knows`;
  const source = asString(document["subjectId"]);
  const subjectId = await subjects.find(tx, subjectType, source);
  if (subjectId === undefined) return `its ${subjectType} ${source} was not imported`;
  return { subjectType, subjectId };
}

/** `permissions`: each grant on the subject the import gave its researcher or service account. */
export function permissionsImporter(
  replace: boolean,
  subjects: ImportedSubjects,
  ctx: ClockContext,
): CollectionImporter {
  return {
    absent: absentPermissions,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const subject = await subjectOf(tx, document, subjects);
        const grant = grantOf(document);
        if (typeof subject === "string" || typeof grant === "string") {
          outcomes.push(skipped(typeof subject === "string" ? subject : (grant as string)));
          continue;
        }
        const values = {
          subjectId: subject.subjectId,
          subjectType: subject.subjectType,
          resourceType: grant.resourceType,
          studyKey: grant.resourceKey,
          action: grant.action,
          limiter: grant.limiter,
        };
        const sameGrant = and(
          eq(permissions.subjectId, values.subjectId),
          eq(permissions.subjectType, values.subjectType),
          eq(permissions.resourceType, values.resourceType),
          eq(permissions.studyKey, values.studyKey),
          eq(permissions.action, values.action),
          sql`md5(coalesce(${permissions.limiter}::text, '')) = md5(coalesce(${values.limiter === null ? null : JSON.stringify(values.limiter)}::jsonb::text, ''))`,
        );
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "permission",
              sourceId: documentId(document),
              label: "this grant",
              sameWhenNatural: true,
              findNatural: async (db) => {
                const [found] = await db.select({ id: permissions.id }).from(permissions).where(sameGrant);
                return found ? String(found.id) : undefined;
              },
              exists: async (db, id) =>
                (
                  await db
                    .select({ id: permissions.id })
                    .from(permissions)
                    .where(eq(permissions.id, Number(id)))
                ).length > 0,
              insert: async (db) => {
                const [inserted] = await db.insert(permissions).values(values).returning({ id: permissions.id });
                return String(inserted!.id);
              },
              update: async (db, id) => {
                await db
                  .update(permissions)
                  .set(values)
                  .where(eq(permissions.id, Number(id)));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

/** `app_role_templates`: one per app and role. */
export function appRoleTemplatesImporter(replace: boolean, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentAppRoleTemplates,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const appName = asString(document["appName"]);
        const role = asString(document["role"]);
        if (appName === "" || role === "") {
          outcomes.push(skipped("the template has no appName or no role"));
          continue;
        }
        const required: RequiredPermission[] = [];
        let problem: string | undefined;
        for (const [i, entry] of asArray(document["requiredPermissions"]).entries()) {
          const grant = grantOf(asRecord(entry));
          if (typeof grant === "string") {
            problem = `requiredPermissions[${i}]: ${grant}`;
            break;
          }
          required.push({ ...grant, limiter: grant.limiter });
        }
        if (problem !== undefined) {
          outcomes.push(skipped(problem));
          continue;
        }
        const createdAt = goTime(document["createdAt"]) ?? new Date(0);
        const fields = {
          appName,
          role,
          requiredPermissions: required,
          createdAt,
          updatedAt: goTime(document["updatedAt"]) ?? createdAt,
        };
        const sourceId = documentId(document);
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "app-role-template",
              sourceId,
              label: `an app role template ${appName}/${role}`,
              findNatural: async (db) => {
                const [found] = await db
                  .select({ id: appRoleTemplates.id })
                  .from(appRoleTemplates)
                  .where(and(eq(appRoleTemplates.appName, appName), eq(appRoleTemplates.role, role)));
                return found?.id;
              },
              exists: async (db, id) =>
                (await db.select({ id: appRoleTemplates.id }).from(appRoleTemplates).where(eq(appRoleTemplates.id, id)))
                  .length > 0,
              insert: async (db) => {
                const id = isObjectIdHex(sourceId) ? caseAccountUuid(sourceId) : undefined;
                const [inserted] = await db
                  .insert(appRoleTemplates)
                  .values({ ...(id ? { id } : {}), ...fields })
                  .returning({ id: appRoleTemplates.id });
                return inserted!.id;
              },
              update: async (db, id) => {
                await db.update(appRoleTemplates).set(fields).where(eq(appRoleTemplates.id, id));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

/** `app_roles`: each role on the subject the import gave its researcher or service account. */
export function appRolesImporter(replace: boolean, subjects: ImportedSubjects, ctx: ClockContext): CollectionImporter {
  return {
    absent: absentAppRoles,
    importBatch: async (tx, batch, write) => {
      const outcomes: DocumentOutcome[] = [];
      for (const { bytes, document } of batch) {
        const subject = await subjectOf(tx, document, subjects);
        const appName = asString(document["appName"]);
        const role = asString(document["role"]);
        if (typeof subject === "string" || appName === "" || role === "") {
          outcomes.push(skipped(typeof subject === "string" ? subject : "the app role has no appName or no role"));
          continue;
        }
        const values = { ...subject, appName, role, createdAt: goTime(document["createdAt"]) ?? new Date(0) };
        const sameRole = and(
          eq(appRoles.subjectType, values.subjectType),
          eq(appRoles.subjectId, values.subjectId),
          eq(appRoles.appName, appName),
          eq(appRoles.role, role),
        );
        outcomes.push(
          await importRecordedRow(
            tx,
            {
              kind: "app-role",
              sourceId: documentId(document),
              label: "this app role",
              sameWhenNatural: true,
              findNatural: async (db) => (await db.select({ id: appRoles.id }).from(appRoles).where(sameRole))[0]?.id,
              exists: async (db, id) =>
                (await db.select({ id: appRoles.id }).from(appRoles).where(eq(appRoles.id, id))).length > 0,
              insert: async (db) => {
                const sourceId = documentId(document);
                const [inserted] = await db
                  .insert(appRoles)
                  .values({ ...(isObjectIdHex(sourceId) ? { id: caseAccountUuid(sourceId) } : {}), ...values })
                  .returning({ id: appRoles.id });
                return inserted!.id;
              },
              update: async (db, id) => {
                await db.update(appRoles).set(values).where(eq(appRoles.id, id));
              },
            },
            bytes,
            write,
            replace,
            ctx,
          ),
        );
      }
      return outcomes;
    },
  };
}

/** Imports one collection file through an importer (the run's batches, checkpoints and report). */
export type ImportCollection = (file: DumpCollectionFile, importer: CollectionImporter) => Promise<unknown>;

/**
 * The management collections of `<prefix><instance>_users`, each when the dump has it: subjects
 * before the grants and roles that name them. Sessions are not carried: researchers sign in again.
 */
export async function importManagementCollections(
  dumpDir: string,
  database: string,
  replace: boolean,
  ctx: ClockContext,
  importCollection: ImportCollection,
) {
  const subjects = new ImportedSubjects();
  const steps: [string, CollectionImporter][] = [
    ["management_users", managementUsersImporter(replace, subjects, ctx)],
    ["service_users", serviceUsersImporter(replace, subjects, ctx)],
    ["service_user_api_keys", serviceUserApiKeysImporter(subjects, ctx)],
    ["permissions", permissionsImporter(replace, subjects, ctx)],
    ["app_role_templates", appRoleTemplatesImporter(replace, ctx)],
    ["app_roles", appRolesImporter(replace, subjects, ctx)],
  ];
  for (const [collection, importer] of steps) {
    const file = await findDumpCollection(dumpDir, database, collection);
    if (file) await importCollection(file, importer);
  }
}
