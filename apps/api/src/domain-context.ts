import type { DomainContext } from "@studyflow/domain/events";
import type { AppDeps } from "./deps";

export function domainContext(deps: AppDeps): DomainContext {
  return {
    clock: deps.clock,
    ...(deps.callExternalService ? { callExternalService: deps.callExternalService } : {}),
    ...(deps.onRuleFailures ? { onRuleFailures: deps.onRuleFailures } : {}),
  };
}
