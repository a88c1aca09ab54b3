import type { SubjectType } from "@studyflow/db";
import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { registerGrantSubjectPermission } from "./grant-subject-permission";
import { registerListSubjectPermissions } from "./list-subject-permissions";
import { registerRevokeSubjectPermission } from "./revoke-subject-permission";
import { registerSetSubjectPermissionLimiter } from "./set-subject-permission-limiter";

/**
 * A subject's permissions as case-backend serves them for management users and service accounts
 * alike (admin-only, audited): list, grant, remove, set the limiter. Mounted at
 * `management-users/{userID}/permissions` and `service-accounts/{serviceAccountID}/permissions`.
 */
export function createSubjectPermissionsRouter(deps: AppDeps, subjectType: SubjectType) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListSubjectPermissions(router, deps, subjectType);
  registerGrantSubjectPermission(router, deps, subjectType);
  registerRevokeSubjectPermission(router, deps, subjectType);
  registerSetSubjectPermissionLimiter(router, deps, subjectType);
  return router;
}
