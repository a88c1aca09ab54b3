import type { EngineServices } from "./types";

/** The ports that change something (or call out); a read-only evaluation refuses them. */
const WRITING_PORTS = [
  "incrementCounter",
  "resetCounter",
  "drawCode",
  "removeCode",
  "updateStudyVariable",
  "callExternalService",
  // records the message it refuses
  "refuseMessage",
] as const satisfies readonly (keyof EngineServices)[];

/**
 * The services with every writing port (and external calls) refused: for evaluations that must
 * only read, such as a survey's context and prefill rules when a participant opens a survey. An
 * expression that reaches a refused port fails with a rule error naming it, as any port rejection does.
 */
export function readOnlyServices(services: EngineServices): EngineServices {
  const refused = Object.fromEntries(
    WRITING_PORTS.map((port) => [
      port,
      () => Promise.reject(new Error(`${port} is not available here: this evaluation only reads`)),
    ]),
  );
  return { ...services, ...refused };
}
