// An in-memory implementation of the service ports, for tests and dry runs. It behaves like the
// database implementation is specified to: atomic counters starting at 1, codes drawn once,
// variables updated only with their declared type, old responses newest first, messages refused
// for a type without a template.
import type { EngineEnv, EngineServices, OldResponsesQuery, StudyVariable, SurveyResponse } from "./types";

export interface InMemorySeed {
  counters?: Record<string, number>;
  codeLists?: Record<string, string[]>;
  variables?: StudyVariable[];
  oldResponses?: (SurveyResponse & { participantId: string })[];
  externalServices?: Record<string, (route: string, body: unknown) => unknown>;
  /** The message types the study has a template for; absent: every type has one. */
  messageTemplates?: string[];
}

export interface InMemoryServices extends EngineServices {
  /** Counters, code lists and variables as they are now (copies). */
  snapshot(): { counters: Record<string, number>; codeLists: Record<string, string[]>; variables: StudyVariable[] };
}

const clone = <T>(value: T): T => structuredClone(value);

export function createInMemoryServices(seed: InMemorySeed = {}): InMemoryServices {
  const counters = new Map(Object.entries(seed.counters ?? {}));
  const codeLists = new Map(Object.entries(seed.codeLists ?? {}).map(([k, codes]) => [k, [...codes]]));
  const variables = new Map((seed.variables ?? []).map((v) => [v.key, clone(v)]));
  const oldResponses = clone(seed.oldResponses ?? []);
  const externalServices = new Map(Object.entries(seed.externalServices ?? {}));
  const messageTemplates = seed.messageTemplates ? new Set(seed.messageTemplates) : null;

  return {
    getCounterValue: (scope) => Promise.resolve(counters.get(scope) ?? 0),
    incrementCounter: (scope) => {
      const next = (counters.get(scope) ?? 0) + 1;
      counters.set(scope, next);
      return Promise.resolve(next);
    },
    resetCounter: (scope) => {
      counters.delete(scope);
      return Promise.resolve();
    },
    isCodePresent: (listKey, code) => Promise.resolve(codeLists.get(listKey)?.includes(code) ?? false),
    drawCode: (listKey) => Promise.resolve(codeLists.get(listKey)?.shift() ?? null),
    removeCode: (listKey, code) => {
      const list = codeLists.get(listKey);
      const at = list?.indexOf(code) ?? -1;
      if (list && at >= 0) list.splice(at, 1);
      return Promise.resolve();
    },
    getStudyVariable: (key) => {
      const variable = variables.get(key);
      return Promise.resolve(variable ? clone(variable) : null);
    },
    updateStudyVariable: (key, type, value) => {
      const variable = variables.get(key);
      if (!variable) return Promise.reject(new Error(`study variable ${JSON.stringify(key)} not found`));
      if (variable.type !== type) {
        return Promise.reject(
          new Error(`study variable ${JSON.stringify(key)} is declared "${variable.type}", not "${type}"`),
        );
      }
      variables.set(key, { ...variable, value });
      return Promise.resolve();
    },
    findOldResponses: (query: OldResponsesQuery) => {
      const found = oldResponses
        .filter(
          (r) =>
            r.participantId === query.participantId &&
            (query.surveyKey === undefined || r.key === query.surveyKey) &&
            (query.since === undefined || (r.arrivedAt ?? 0) > query.since) &&
            (query.until === undefined || (r.arrivedAt ?? 0) < query.until),
        )
        .sort((a, b) => (b.arrivedAt ?? 0) - (a.arrivedAt ?? 0))
        .slice(0, query.limit);
      return Promise.resolve(clone(found));
    },
    callExternalService: async (serviceName, route, body) => {
      const handler = externalServices.get(serviceName);
      if (!handler) throw new Error(`no external service config found with name: ${serviceName}`);
      // a round trip through JSON, as over HTTP
      return JSON.parse(JSON.stringify((await handler(route, clone(body))) ?? null)) as unknown;
    },
    refuseMessage: ({ messageType }) =>
      Promise.resolve(
        messageTemplates === null || messageTemplates.has(messageType)
          ? null
          : `no template for message type ${JSON.stringify(messageType)}`,
      ),
    snapshot: () => ({
      counters: Object.fromEntries(counters),
      codeLists: Object.fromEntries([...codeLists].map(([k, codes]) => [k, [...codes]])),
      variables: [...variables.values()].map(clone),
    }),
  };
}

export interface DeterministicEnvOptions {
  services?: EngineServices;
  /** Fixed time in milliseconds since the epoch (default 2024-01-01T00:00:00Z). */
  now?: number;
  /** Seed of the pseudo-random source. */
  seed?: number;
}

/**
 * An environment with a fixed clock, a seeded random source and counting message ids, so a dry
 * run or a test gives the same result every time.
 */
export function createDeterministicEnv(options: DeterministicEnvOptions = {}): EngineEnv {
  let state = (options.seed ?? 1) >>> 0;
  let nextId = 0;
  const now = options.now ?? Date.UTC(2024, 0, 1);
  return {
    services: options.services ?? createInMemoryServices(),
    clock: () => now,
    // mulberry32: small, fast, good enough for reproducible draws
    random: () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    newId: () => (++nextId).toString(16).padStart(24, "0"),
  };
}
