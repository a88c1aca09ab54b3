import type { DomainContext } from "@studyflow/domain";
import type { AppDeps } from "./deps";

export function domainContext(deps: AppDeps): DomainContext {
  return { clock: deps.clock ?? Date.now };
}
