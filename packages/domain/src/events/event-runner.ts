import { randomBytes } from "node:crypto";
import {
  applyRules,
  type ApplyResult,
  type EngineEnv,
  type ParticipantState,
  type StudyEvent,
} from "@studyflow/engine";
import type { Executor } from "@studyflow/db";
import { RuleFailed } from "../errors";
import { createPostgresEngineServices, type ExternalServiceCaller } from "../rules/postgres-engine-services";
import { loadCurrentRules } from "../rules/study-rules";

/** What domain operations need from their caller besides the database. */
export interface DomainContext {
  /** Milliseconds since the epoch. */
  clock: () => number;
  callExternalService?: ExternalServiceCaller;
}

/**
 * Uniform in [0, 1) from the operating system's generator, with the 53 bits a double holds:
 * 7 random bytes, the top 53 of their 56 bits. (crypto.randomInt cannot do this: its range must
 * stay below 2^48.)
 */
export function secureRandom(): number {
  const bytes = randomBytes(7);
  let value = 0;
  for (const byte of bytes) value = value * 256 + byte;
  return Math.floor(value / 8) / 2 ** 53;
}

export function newMessageId(): string {
  return randomBytes(12).toString("hex");
}

export function engineEnvFor(tx: Executor, studyKey: string, ctx: DomainContext): EngineEnv {
  return {
    services: createPostgresEngineServices(tx, studyKey, ctx.callExternalService),
    clock: ctx.clock,
    random: secureRandom,
    newId: newMessageId,
  };
}

export const nowSeconds = (ctx: DomainContext) => Math.floor(ctx.clock() / 1000);

/**
 * Runs the study's current rules for one event inside the caller's transaction. A study without
 * rules leaves the state as it is. A failing rule throws RuleFailed, which rolls back the event.
 */
export async function runEventRules(
  tx: Executor,
  state: ParticipantState,
  event: StudyEvent,
  ctx: DomainContext,
): Promise<ApplyResult> {
  const rules = await loadCurrentRules(tx, event.studyKey);
  if (!rules) return { state, reports: [], effects: [], changedPerRule: [] };
  const result = await applyRules(rules.compiled, state, event, engineEnvFor(tx, event.studyKey, ctx));
  if (result.error) {
    throw new RuleFailed(
      `study rules failed on ${event.type} (rule ${result.error.ruleIndex}): ${result.error.message}`,
    );
  }
  return result;
}
