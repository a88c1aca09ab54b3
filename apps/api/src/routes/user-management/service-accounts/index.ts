import type { AppDeps } from "../../../deps";
import { createRouter } from "../../create-router";
import { createSubjectPermissionsRouter } from "../permissions";
import { createApiKeysRouter } from "./api-keys";
import { registerCreateServiceAccount } from "./create-service-account";
import { registerDeleteServiceAccount } from "./delete-service-account";
import { registerGetServiceAccount } from "./get-service-account";
import { registerListServiceAccounts } from "./list-service-accounts";
import { registerUpdateServiceAccount } from "./update-service-account";

/**
 * Service accounts at /v1/user-management/service-accounts: the management API's non-human
 * callers, their API keys and their permissions. Admins only.
 */
export function createServiceAccountsRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListServiceAccounts(router, deps);
  registerCreateServiceAccount(router, deps);
  registerGetServiceAccount(router, deps);
  registerUpdateServiceAccount(router, deps);
  registerDeleteServiceAccount(router, deps);
  router.route("/:serviceAccountID/api-keys", createApiKeysRouter(deps));
  router.route("/:serviceAccountID/permissions", createSubjectPermissionsRouter(deps, "service-account"));
  return router;
}
