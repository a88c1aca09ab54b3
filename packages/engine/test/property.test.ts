// Property tests: the validator survives any JSON, and every rule set it accepts runs on any
// participant state and event without throwing. Rule trees are also generated from the registry,
// so the evaluation property covers every expression and action, not just what random JSON hits.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
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
import { anyState, expressionTree, ruleSets, studyEvent } from "./arbitraries";
import { NOW } from "./builders";

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
