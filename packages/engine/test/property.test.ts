// Property tests: the validator survives any JSON, and every rule set it accepts runs on any
// participant state and event without throwing. Rule trees are also generated from the registry,
// so the evaluation property covers every expression and action, not just what random JSON hits.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ArgSpec, FunctionSpec, ValueType } from "../src/function-spec";
import { argSpecAt } from "../src/function-spec";
import type { Expression, ExpressionArg, ParticipantState, StudyEvent, SurveyResponse } from "../src/index";
import {
  applyRules,
  compileRules,
  createDeterministicEnv,
  createInMemoryServices,
  evaluateExpression,
  validateExpression,
  validateRules,
} from "../src/index";
import { participantStateProblem } from "../src/participant-state";
import { actionSpecs, expressionSpecs } from "../src/registry";
import { NOW } from "./builders";

const KEYS = [
  "a",
  "b",
  "s1",
  "weekly",
  "weekly.Q1",
  "rg",
  "rg.mcg",
  "rg.txt",
  "CUSTOM",
  "SUBMIT",
  "first",
  "last",
  "reminder",
  "c",
  "list",
  "",
];
const key = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

// ---- rule trees from the registry ----------------------------------------------------------------

const MAX_DEPTH = 4;

const literalStr = (s: string): ExpressionArg => ({ dtype: "str", str: s });
const literalNum = (n: number): ExpressionArg => ({ dtype: "num", num: n });
const numbers = fc.oneof(
  fc.integer({ min: -3, max: 60 }),
  fc.constantFrom(0, 1, NOW, NOW - 86_400, NOW + 86_400),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }),
);

/** Literals the slot accepts: the validator's literal checks are respected, not bypassed. */
function literalFor(slot: ArgSpec): fc.Arbitrary<ExpressionArg> {
  const strings = slot.oneOf
    ? fc.constantFrom(...slot.oneOf)
    : fc.oneof(key, fc.constantFrom("jan", "May", "yyyy-MM-dd 'at' HH:mm"));
  const candidates =
    slot.literalOnly || slot.type === "str"
      ? strings.map(literalStr)
      : slot.type === "num"
        ? numbers.map(literalNum)
        : fc.oneof(strings.map(literalStr), numbers.map(literalNum));
  const check = slot.checkLiteral;
  if (!check) return candidates;
  return candidates.filter((a) => check(a.dtype === "num" ? (a.num ?? 0) : (a.str ?? "")) === null);
}

const returnsOf = (spec: FunctionSpec): ValueType => (spec.kind === "expression" ? spec.returns : "any");
const fits = (spec: FunctionSpec, type: ValueType) =>
  type === "any" || returnsOf(spec) === type || returnsOf(spec) === "any";
/** Zero-argument expressions to end the recursion, one per type. */
const LEAVES: Record<ValueType, string> = {
  bool: "hasEventPayload",
  num: "getStudyEntryTime",
  str: "getCurrentStudySession",
  any: "getStudyEntryTime",
};

function argCount(spec: FunctionSpec): fc.Arbitrary<number> {
  const max = Math.min(spec.maxArgs, spec.minArgs + 3);
  return fc.integer({ min: spec.minArgs, max });
}

function argsFor(spec: FunctionSpec, depth: number): fc.Arbitrary<ExpressionArg[]> {
  return argCount(spec).chain((count) =>
    fc.tuple(
      ...Array.from({ length: count }, (_, i) => {
        const slot = argSpecAt(spec, i) as ArgSpec;
        return argFor(slot, depth);
      }),
    ),
  );
}

function argFor(slot: ArgSpec, depth: number): fc.Arbitrary<ExpressionArg> {
  if (slot.role === "action") return actionTree(depth + 1).map((exp) => ({ dtype: "exp", exp }));
  const asExpression = expressionTree(slot.type, depth + 1).map((exp): ExpressionArg => ({ dtype: "exp", exp }));
  if (slot.expressionOnly || slot.type === "bool") return asExpression;
  if (slot.literalOnly) return literalFor(slot);
  if (slot.role === "condition") return fc.oneof(asExpression, literalFor(slot));
  return fc.oneof({ weight: 2, arbitrary: literalFor(slot) }, { weight: 1, arbitrary: asExpression });
}

function expressionTree(type: ValueType, depth: number): fc.Arbitrary<Expression> {
  if (depth >= MAX_DEPTH) return fc.constant({ name: LEAVES[type] });
  const candidates = expressionSpecs.filter((s) => fits(s, type));
  return fc.constantFrom(...candidates).chain((spec) =>
    argsFor(spec, depth).map((data): Expression => {
      // externalEventEval may declare a float result
      const withType = spec.name === "externalEventEval" && type === "num" ? { returnType: "float" } : {};
      return { name: spec.name, data, ...withType };
    }),
  );
}

const leafActions = actionSpecs.filter(
  (s) => s.args.every((a) => a.role !== "action") && !s.rest?.(s.args.length).role.includes("action"),
);

function actionTree(depth: number): fc.Arbitrary<Expression> {
  const candidates = depth >= MAX_DEPTH ? leafActions : actionSpecs;
  return fc
    .constantFrom(...candidates)
    .chain((spec) => argsFor(spec, depth).map((data): Expression => ({ name: spec.name, data })));
}

const ruleSets = fc.array(actionTree(1), { minLength: 1, maxLength: 4 });

// ---- participants and events ---------------------------------------------------------------------

const stringMap = fc.dictionary(key, fc.string({ maxLength: 5 }), { maxKeys: 4 });
const timestamp = fc.oneof(fc.constantFrom(0, NOW, NOW - 3600), fc.integer({ min: -1e10, max: 1e10 }));
const survey = fc.record({
  surveyKey: key,
  validFrom: timestamp,
  validUntil: timestamp,
  category: fc.constantFrom("normal", "prio", ""),
});
const message = fc.record({ id: fc.string({ maxLength: 4 }), type: key, scheduledFor: timestamp });

const wellFormedState: fc.Arbitrary<ParticipantState> = fc.record({
  participantId: fc.constantFrom("p1", "p2", ""),
  currentStudySession: fc.string({ maxLength: 6 }),
  enteredAt: timestamp,
  modifiedAt: timestamp,
  studyStatus: fc.constantFrom("active", "exited", "temporary", ""),
  flags: stringMap,
  linkingCodes: stringMap,
  assignedSurveys: fc.array(survey, { maxLength: 4 }),
  lastSubmissions: fc.dictionary(key, timestamp, { maxKeys: 3 }),
  messages: fc.array(message, { maxLength: 3 }),
});

/** Mostly real states, some with null or missing containers, some plain garbage. */
const anyState: fc.Arbitrary<ParticipantState> = fc.oneof(
  { weight: 6, arbitrary: wellFormedState },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        wellFormedState,
        fc.subarray(["flags", "linkingCodes", "assignedSurveys", "lastSubmissions", "messages", "studyStatus"]),
      )
      .map(([s, nulled]) => ({ ...s, ...Object.fromEntries(nulled.map((k) => [k, null])) })),
  },
  { weight: 1, arbitrary: fc.anything().map((x) => x as ParticipantState) },
);

const responseItem: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  item: fc.record(
    {
      key: fc.constantFrom("rg", "mcg", "txt", "a", "b"),
      value: fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("1", "2.5")),
      items: fc.array(tie("item"), { maxLength: 3 }),
    },
    { requiredKeys: ["key"] },
  ),
})).item;

const surveyResponse: fc.Arbitrary<SurveyResponse> = fc.record(
  {
    key: key,
    arrivedAt: timestamp,
    responses: fc.array(fc.record({ key: fc.constantFrom("weekly.Q1", "weekly.Q2", "x"), response: responseItem }), {
      maxLength: 3,
    }),
  },
  { requiredKeys: ["key"] },
) as fc.Arbitrary<SurveyResponse>;

const studyEvent: fc.Arbitrary<StudyEvent> = fc.record(
  {
    type: fc.constantFrom("ENTER", "SUBMIT", "LEAVE", "MERGE", "CUSTOM", "TIMER"),
    studyKey: fc.constantFrom("study1", ""),
    eventKey: key,
    payload: fc.dictionary(key, fc.jsonValue({ maxDepth: 2 })),
    response: surveyResponse,
    mergeWithParticipant: anyState,
    participantIDForConfidentialResponses: fc.constantFrom("conf", ""),
  },
  { requiredKeys: ["type", "studyKey"] },
);

function environment(reply: unknown) {
  return createDeterministicEnv({
    now: NOW * 1000,
    services: createInMemoryServices({
      counters: { c: 3 },
      codeLists: { list: ["x", "y"] },
      variables: [
        { key: "a", type: "int", value: 1 },
        { key: "b", type: "boolean", value: true },
      ],
      oldResponses: [{ key: "weekly", participantId: "p1", arrivedAt: NOW - 100, responses: [] }],
      externalServices: { a: () => reply, b: () => reply, svc: () => reply },
    }),
  });
}

// ---- properties ----------------------------------------------------------------------------------

const RUNS = 300;

describe("validator properties", () => {
  it("never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (input) => {
        const result = validateRules(input);
        expect(typeof result.ok).toBe("boolean");
        validateExpression(input);
      }),
      { numRuns: 1000 },
    );
  });

  it("never throws on arbitrary values and expression-like trees with random names and dtypes", () => {
    const looseArg = fc.letrec((tie) => ({
      expr: fc.record(
        {
          name: fc.oneof(
            fc.constantFrom(...expressionSpecs.map((s) => s.name), ...actionSpecs.map((s) => s.name)),
            fc.anything(),
          ),
          data: fc.oneof(fc.array(tie("arg"), { maxLength: 4 }), fc.anything()),
        },
        { requiredKeys: [] },
      ),
      arg: fc.record(
        {
          dtype: fc.oneof(fc.constantFrom("str", "num", "exp"), fc.anything()),
          str: fc.anything(),
          num: fc.anything(),
          exp: fc.oneof(tie("expr"), fc.anything()),
        },
        { requiredKeys: [] },
      ),
    }));
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.array(looseArg.expr, { maxLength: 4 })), (input) => {
        expect(() => validateRules(input)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });

  it("accepts every rule tree generated from the registry", () => {
    fc.assert(
      fc.property(ruleSets, (rules) => {
        const result = validateRules(rules);
        expect(result.ok ? [] : result.errors).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("evaluation properties", () => {
  it("any validated rule set runs on any state and event without throwing and without mutating the state", async () => {
    await fc.assert(
      fc.asyncProperty(
        ruleSets,
        anyState,
        studyEvent,
        fc.jsonValue({ maxDepth: 3 }),
        fc.boolean(),
        async (rules, state, ev, reply, keepGoing) => {
          const compiled = compileRules(rules);
          const before = structuredClone(state);
          const result = await applyRules(compiled, state, ev, environment(reply), {
            onRuleError: keepGoing ? "continue" : "stop",
          });
          expect(state).toEqual(before);
          expect(result.changedPerRule).toHaveLength(rules.length);
          expect(participantStateProblem(result.state)).toBeNull();
          if (result.error) expect(result.error.message).not.toContain("internal error");
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("any generated expression evaluates to a value or an error message", async () => {
    await fc.assert(
      fc.asyncProperty(
        expressionTree("any", 1),
        anyState,
        studyEvent,
        fc.jsonValue({ maxDepth: 2 }),
        async (expression, state, ev, reply) => {
          const result = await evaluateExpression(expression, state, ev, environment(reply));
          if (result.error !== undefined) expect(typeof result.error).toBe("string");
          expect(result.error ?? "").not.toContain("internal error");
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("arbitrary JSON that happens to validate also runs", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), anyState, studyEvent, async (input, state, ev) => {
        const checked = validateRules(input);
        if (!checked.ok) return;
        const result = await applyRules(compileRules(checked.rules), state, ev, environment(null));
        expect(result.changedPerRule).toHaveLength(checked.rules.length);
      }),
      { numRuns: 300 },
    );
  });
});
