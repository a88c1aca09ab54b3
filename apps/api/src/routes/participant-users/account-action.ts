import type { AppDeps } from "../../deps";

/** An operator's action on an account (lock, unlock, sign out), as the domain takes it. */
export const accountAction = (deps: AppDeps, id: string, operator: string) => ({
  userId: id,
  operator,
  now: new Date(deps.clock()),
});
