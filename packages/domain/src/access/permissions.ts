import { and, eq, inArray } from "drizzle-orm";
import {
  permissions,
  profiles,
  rawClientOf,
  type Executor,
  type PermissionAction,
  type PermissionLimiter,
  type ResourceType,
  type StudyAction,
  type SubjectType,
} from "@studyflow/db";
import { readCacheOf } from "../cache/read-cache";
import { Forbidden } from "../errors";

export interface ManagementSubject {
  subject: string;
  isAdmin: boolean;
  /**
   * Whose permissions apply: a person's (management user, or a token subject of the CLI or an
   * external provider) or a service account's. Absent: "management-user", as for every caller
   * before service accounts had their own permissions (keys without an account included).
   */
  subjectType?: SubjectType;
}

/**
 * case-backend's permission check, over studyflow's permission rows: admins pass; anyone else
 * needs a grant of its subject (id and type) for the resource type, one of `resourceKeys`, the
 * action (or an alias of it, or "*"), whose limiter is null or matches `limiter`.
 */
export interface PermissionRequest {
  resourceType: ResourceType;
  /**
   * The keys a grant may name, as case-backend lists them: a study's are `[studyKey, "*"]`
   * (see studyResource), messaging's its one key (`["global-email-templates"]`), users' `["*"]`.
   */
  resourceKeys: readonly string[];
  /**
   * The action asked for; a list means any of them (CASE's read-study-config reads that an sf
   * grant of the same area also opens: `["read-study-config", "manage-surveys"]`).
   */
  action: PermissionAction | readonly PermissionAction[];
  /**
   * What the request touches, for limited grants (`{ surveyKey: "intake" }`): a grant with a
   * limiter passes when one of its maps holds every key with this value. Absent: limited grants
   * do not pass.
   */
  limiter?: Readonly<Record<string, string>>;
}

/** A study as a resource: its key or "*". */
export const studyResource = (studyKey: string) =>
  ({ resourceType: "study", resourceKeys: [studyKey, "*"] }) as const satisfies Omit<PermissionRequest, "action">;

/**
 * studyflow's own action names that also grant a CASE action (the CASE name is canonical: new
 * grants use it). A grant of `manage-surveys`, made before case-admin's names existed, keeps
 * opening every survey operation case-admin performs. The other direction does not hold: a grant
 * of CASE's `update-survey` does not open studyflow's `manage-surveys` routes.
 */
export const ACTION_ALIASES: Readonly<Partial<Record<PermissionAction, readonly StudyAction[]>>> = {
  "update-study-status": ["update-study-props"],
  "create-survey": ["manage-surveys"],
  "update-survey": ["manage-surveys"],
  "unpublish-survey": ["manage-surveys"],
  "delete-survey-version": ["manage-surveys"],
  "update-study-rules": ["manage-rules"],
  "manage-study-code-lists": ["manage-code-lists"],
  "update-notification-subscriptions": ["manage-subscriptions"],
};

/** Every grant action that satisfies a request for `action`: itself, its aliases and "*". */
export function grantingActions(action: PermissionRequest["action"]): PermissionAction[] {
  const asked: readonly PermissionAction[] = typeof action === "string" ? [action] : action;
  return [...new Set<PermissionAction>(["*", ...asked, ...asked.flatMap((name) => ACTION_ALIASES[name] ?? [])])];
}

/** A grant as the check reads it. */
export interface Grant {
  subjectType: SubjectType;
  resourceType: ResourceType;
  /** The resource key (the column is `study_key`). */
  studyKey: string;
  action: PermissionAction;
  limiter: PermissionLimiter | null;
}

/**
 * case-backend's checkLimiter: unlimited grants pass; limited ones need a map agreeing on every
 * requested key (a key the map lacks reads as "", as a Go map lookup does).
 */
export function limiterAllows(grantLimiter: PermissionLimiter | null, requested?: Readonly<Record<string, string>>) {
  if (grantLimiter === null) return true;
  if (requested === undefined) return false;
  return grantLimiter.some((map) =>
    Object.entries(requested).every(([key, value]) => (Object.hasOwn(map, key) ? map[key] : "") === value),
  );
}

/** Whether one of `grants` (of any subject type) allows `request` for a subject of `subjectType`. */
export function grantsAllow(grants: readonly Grant[], subjectType: SubjectType, request: PermissionRequest): boolean {
  const actions = grantingActions(request.action);
  return grants.some(
    (grant) =>
      grant.subjectType === subjectType &&
      grant.resourceType === request.resourceType &&
      request.resourceKeys.includes(grant.studyKey) &&
      actions.includes(grant.action) &&
      limiterAllows(grant.limiter, request.limiter),
  );
}

const grantColumns = {
  subjectType: permissions.subjectType,
  resourceType: permissions.resourceType,
  studyKey: permissions.studyKey,
  action: permissions.action,
  limiter: permissions.limiter,
};

/** Admins pass; anyone else needs a matching grant (see PermissionRequest). */
export async function hasPermission(
  db: Executor,
  who: ManagementSubject,
  request: PermissionRequest,
): Promise<boolean> {
  if (who.isAdmin) return true;
  const subjectType = who.subjectType ?? "management-user";
  const cache = readCacheOf(db);
  if (cache) {
    // All of the subject's grants, kept together: a missing permission is answered from memory too.
    const grants = await cache.get("grants", who.subject, () =>
      db.select(grantColumns).from(permissions).where(eq(permissions.subjectId, who.subject)),
    );
    return grantsAllow(grants ?? [], subjectType, request);
  }
  const grants = await db
    .select(grantColumns)
    .from(permissions)
    .where(
      and(
        eq(permissions.subjectId, who.subject),
        eq(permissions.subjectType, subjectType),
        eq(permissions.resourceType, request.resourceType),
        inArray(permissions.studyKey, [...request.resourceKeys]),
        inArray(permissions.action, grantingActions(request.action)),
      ),
    );
  return grantsAllow(grants, subjectType, request);
}

/** hasPermission, or 403 naming what is missing. */
export async function assertPermission(
  db: Executor,
  who: ManagementSubject,
  request: PermissionRequest,
): Promise<void> {
  if (await hasPermission(db, who, request)) return;
  const action = typeof request.action === "string" ? request.action : request.action.join('" or "');
  const key = request.resourceKeys.find((resourceKey) => resourceKey !== "*") ?? "*";
  const what = request.resourceType === "study" ? `study "${key}"` : `${request.resourceType} "${key}"`;
  throw new Forbidden(`missing permission "${action}" for ${what}`);
}

/** Admins pass; others need a permission for this study (or "*") and this action (or an alias, or "*"). */
export async function assertStudyPermission(
  db: Executor,
  who: ManagementSubject,
  studyKey: string,
  action: PermissionAction | readonly PermissionAction[],
  limiter?: Readonly<Record<string, string>>,
): Promise<void> {
  await assertPermission(db, who, { ...studyResource(studyKey), action, ...(limiter ? { limiter } : {}) });
}

/**
 * Study keys the subject holds any study permission for ("*" among them: every study); other
 * resource types (messaging, users) show no study.
 */
export async function grantedStudyKeys(db: Executor, who: ManagementSubject): Promise<string[]> {
  const rows = await db
    .selectDistinct({ studyKey: permissions.studyKey })
    .from(permissions)
    .where(
      and(
        eq(permissions.subjectId, who.subject),
        eq(permissions.subjectType, who.subjectType ?? "management-user"),
        eq(permissions.resourceType, "study"),
      ),
    );
  return rows.map((row) => row.studyKey);
}

export interface OwnedProfile {
  id: string;
  mainProfile: boolean;
}

/** The profile must belong to the signed-in user; anything else is indistinguishable from a stranger's. */
export async function assertProfileOfUser(db: Executor, userId: string, profileId: string): Promise<OwnedProfile> {
  const cache = readCacheOf(db);
  if (cache) {
    // Kept by profile, with its owner: only profiles that exist are kept, so a new one needs no announcement.
    const owned = await cache.get("profile", profileId, async () => {
      // prepared once per connection: a miss costs one round trip, where drizzle's describes first
      const [row] = await rawClientOf(db)<{ id: string; user_id: string; main_profile: boolean }[]>`
        select id, user_id, main_profile from profiles where id = ${profileId} limit 1`;
      return row && { id: row.id, userId: row.user_id, mainProfile: row.main_profile };
    });
    if (!owned || owned.userId !== userId) throw new Forbidden("profile does not belong to the signed-in user");
    return { id: owned.id, mainProfile: owned.mainProfile };
  }
  const [profile] = await db
    .select({ id: profiles.id, mainProfile: profiles.mainProfile })
    .from(profiles)
    .where(and(eq(profiles.id, profileId), eq(profiles.userId, userId)))
    .limit(1);
  if (!profile) throw new Forbidden("profile does not belong to the signed-in user");
  return profile;
}
