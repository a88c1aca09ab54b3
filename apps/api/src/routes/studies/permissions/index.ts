import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { registerAddStudyPermission } from "./add-study-permission";
import { registerListStudyPermissions } from "./list-study-permissions";
import { registerRemoveStudyPermission } from "./remove-study-permission";

/**
 * A study's permissions (`/{studyKey}/permissions…`), declared on the studies router itself: a router
 * of their own would serve its root's slashed twin (`/:trailingSlash{/?}`) at `…/permissions//` too.
 */
export function registerStudyPermissions(router: ApiRouter, deps: AppDeps) {
  registerListStudyPermissions(router, deps);
  registerAddStudyPermission(router, deps);
  registerRemoveStudyPermission(router, deps);
}
