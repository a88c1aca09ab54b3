// Small builders for rule JSON, participants, events and environments used by the tests.
import type { EngineEnv, EngineServices, Expression, ExpressionArg, ParticipantState, StudyEvent } from "../src/index";
import { createDeterministicEnv, createInMemoryServices, normalizeParticipantState } from "../src/index";
import type { InMemorySeed } from "../src/index";

/** 2024-01-01T00:00:00Z, a Monday. */
export const NOW = 1_704_067_200;

export const str = (s: string): ExpressionArg => ({ dtype: "str", str: s });
export const num = (n: number): ExpressionArg => ({ dtype: "num", num: n });
export const exp = (name: string, ...data: ExpressionArg[]): ExpressionArg => ({
  dtype: "exp",
  exp: call(name, ...data),
});
export const call = (name: string, ...data: ExpressionArg[]): Expression =>
  data.length > 0 ? { name, data } : { name };

export function participant(overrides: Partial<ParticipantState> = {}): ParticipantState {
  return normalizeParticipantState({
    participantId: "p1",
    enteredAt: NOW - 86_400,
    modifiedAt: NOW - 60,
    ...overrides,
  });
}

export function event(overrides: Partial<StudyEvent> = {}): StudyEvent {
  return { type: "CUSTOM", studyKey: "study1", ...overrides };
}

export function environment(seed: InMemorySeed = {}, services?: EngineServices): EngineEnv {
  return createDeterministicEnv({ services: services ?? createInMemoryServices(seed), now: NOW * 1000, seed: 7 });
}

/** Services whose `method` rejects, as a database or HTTP error would. */
export function failingServices(method: keyof EngineServices, seed: InMemorySeed = {}): EngineServices {
  const base = createInMemoryServices(seed);
  return { ...base, [method]: () => Promise.reject(new Error(`${method} failed`)) };
}

/** A deep copy, to check later that an input was not mutated. */
export const snapshotOf = <T>(value: T): T => structuredClone(value);
