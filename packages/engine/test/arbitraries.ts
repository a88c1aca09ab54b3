// fast-check generators shared by the property tests: rule trees built from the registry (every
// expression and action, with arguments its signature accepts), participant states and events.
import fc from "fast-check";
import type { ArgSpec, FunctionSpec, ValueType } from "../src/function-spec";
import { argSpecAt } from "../src/function-spec";
import type { Expression, ExpressionArg, ParticipantState, StudyEvent, SurveyResponse } from "../src/index";
import { actionSpecs, expressionSpecs } from "../src/registry";
import { NOW } from "./builders";

export const KEYS = [
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
  // modes of checkConditionForOldResponses
  "all",
  "any",
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
  // checkConditionForOldResponses' condition: mostly a boolean, which it needs to ever hold
  if (slot.expressionOnly)
    return fc.oneof(
      { weight: 3, arbitrary: expressionTree("bool", depth + 1).map((exp): ExpressionArg => ({ dtype: "exp", exp })) },
      { weight: 1, arbitrary: asExpression },
    );
  if (slot.type === "bool") return asExpression;
  if (slot.literalOnly) return literalFor(slot);
  if (slot.role === "condition") return fc.oneof(asExpression, literalFor(slot));
  return fc.oneof({ weight: 2, arbitrary: literalFor(slot) }, { weight: 1, arbitrary: asExpression });
}

export function expressionTree(type: ValueType, depth: number): fc.Arbitrary<Expression> {
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

export const ruleSets = fc.array(actionTree(1), { minLength: 1, maxLength: 4 });

const expArg = (exp: Expression): ExpressionArg => ({ dtype: "exp", exp });

/**
 * A rule that certainly calls `name`, for properties that must cover every registered name. An
 * expression's value lands in a report, or decides as a condition whether an effect is returned
 * (neither reads a participant field beyond the participant id) or a random action runs.
 */
export function ruleUsing(name: string): fc.Arbitrary<Expression> {
  const action = actionSpecs.find((s) => s.name === name);
  if (action) return argsFor(action, 1).map((data): Expression => ({ name, data }));
  const spec = expressionSpecs.find((s) => s.name === name);
  if (!spec) throw new Error(`not a registered name: ${name}`);
  const expression = argsFor(spec, 2).map((data): Expression => ({ name, data }));
  const effect: Expression = { name: "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY", data: [literalStr("then")] };
  return fc.oneof(
    expression.map((value) => ({
      name: "UPDATE_REPORT_DATA",
      data: [literalStr("r"), literalStr("value"), expArg(value)],
    })),
    expression.map((condition) => ({ name: "IFTHEN", data: [expArg(condition), expArg(effect)] })),
    fc.tuple(expression, actionTree(2)).map(([condition, then]) => ({
      name: "IFTHEN",
      data: [expArg(condition), expArg(then)],
    })),
  );
}

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
export const anyState: fc.Arbitrary<ParticipantState> = fc.oneof(
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

export const studyEvent: fc.Arbitrary<StudyEvent> = fc.record(
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
