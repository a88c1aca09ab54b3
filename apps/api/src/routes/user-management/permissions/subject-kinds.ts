import { z } from "@hono/zod-openapi";
import {
  grantManagementUserPermission,
  grantServiceAccountPermission,
  listManagementUserPermissions,
  listServiceAccountPermissions,
  revokeManagementUserPermission,
  revokeServiceAccountPermission,
  setManagementUserPermissionLimiter,
  setServiceAccountPermissionLimiter,
  type NewPermission,
  type PermissionRow,
} from "@studyflow/domain/management-users";
import type { Database, PermissionLimiter, SubjectType } from "@studyflow/db";
import { idParam } from "../user-management-contract";

/** What differs between the subjects whose permissions case-admin manages: their path and their domain functions. */
export interface SubjectKind {
  /** The path parameter naming the subject (case-backend's name). */
  idName: string;
  noun: string;
  /** The 400 message for a grant to an unknown subject, as case-backend answers it. */
  unknownOnGrant: string;
  list(db: Database, subjectId: string): Promise<PermissionRow[]>;
  grant(db: Database, subjectId: string, input: NewPermission, by: string, at: Date): Promise<PermissionRow>;
  revoke(db: Database, subjectId: string, permissionId: string, by: string, at: Date): Promise<void>;
  setLimiter(
    db: Database,
    subjectId: string,
    permissionId: string,
    limiter: PermissionLimiter | null,
    by: string,
    at: Date,
  ): Promise<PermissionRow>;
}

export const SUBJECT_KINDS: Record<SubjectType, SubjectKind> = {
  "management-user": {
    idName: "userID",
    noun: "management user",
    unknownOnGrant: "user not found",
    list: listManagementUserPermissions,
    grant: grantManagementUserPermission,
    revoke: revokeManagementUserPermission,
    setLimiter: setManagementUserPermissionLimiter,
  },
  "service-account": {
    idName: "serviceAccountID",
    noun: "service account",
    unknownOnGrant: "service account not found",
    list: listServiceAccountPermissions,
    grant: grantServiceAccountPermission,
    revoke: revokeServiceAccountPermission,
    setLimiter: setServiceAccountPermissionLimiter,
  },
};

/** The path parameter naming the subject, as the OpenAPI document states it. */
export const subjectParams = ({ idName, noun }: SubjectKind) =>
  z.object({ [idName]: idParam(idName, `the ${noun}'s id`) });

/** The subject's and the permission's path parameters. */
export const permissionParams = ({ idName, noun }: SubjectKind) =>
  z.object({
    [idName]: idParam(idName, `the ${noun}'s id`),
    permissionID: idParam("permissionID", "the permission's id"),
  });

// The params schemas have checked both ids before a handler runs; "" (no id) only satisfies the types.

/** The subject's id among a request's path parameters. */
export const subjectIdOf = (kind: SubjectKind, params: Record<string, string | undefined>) => params[kind.idName] ?? "";

/** The permission's id among a request's path parameters. */
export const permissionIdOf = (params: Record<string, string | undefined>) => params.permissionID ?? "";
