import type { AppDeps } from "../../../../deps";
import { createRouter } from "../../../create-router";
import { registerCreateApiKey } from "./create-api-key";
import { registerDeleteApiKey } from "./delete-api-key";
import { registerListApiKeys } from "./list-api-keys";

/** A service account's API keys, at /v1/user-management/service-accounts/{serviceAccountID}/api-keys. Admins only. */
export function createApiKeysRouter(deps: AppDeps) {
  // the user-management router's auth covers this router
  const router = createRouter();
  registerListApiKeys(router, deps);
  registerCreateApiKey(router, deps);
  registerDeleteApiKey(router, deps);
  return router;
}
