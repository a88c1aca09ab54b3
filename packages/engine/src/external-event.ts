import type { EvalContext } from "./eval-context";
import { releaseState } from "./state-writes";

/** The JSON body posted to external services, shared by externalEventEval and EXTERNAL_EVENT_HANDLER. */
export function externalEventBody(ctx: EvalContext): unknown {
  const event = ctx.event;
  // the state leaves the engine here: later writes must not change what was sent
  releaseState(ctx);
  return {
    participantState: ctx.state,
    eventType: event.type,
    studyKey: event.studyKey,
    eventKey: event.eventKey ?? "",
    payload: event.payload ?? null,
    surveyResponses: event.response ?? null,
  };
}

/** Routes are relative to the service's configured URL; one leading slash is dropped. */
export function externalRoute(route: unknown): string {
  if (typeof route !== "string") return "";
  return route.startsWith("/") ? route.slice(1) : route;
}
