import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { registerListNotificationSubscriptions } from "./list-notification-subscriptions";
import { registerReplaceNotificationSubscriptions } from "./replace-notification-subscriptions";

/**
 * A study's researcher notification subscriptions (`/{studyKey}/notification-subscriptions`), declared
 * on the studies router itself: a router of their own would serve its root's slashed twin
 * (`/:trailingSlash{/?}`) at `…/notification-subscriptions//` too.
 */
export function registerNotificationSubscriptions(router: ApiRouter, deps: AppDeps) {
  registerListNotificationSubscriptions(router, deps);
  registerReplaceNotificationSubscriptions(router, deps);
}
