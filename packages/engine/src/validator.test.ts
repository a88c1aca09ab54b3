import { describe, expect, it } from "vitest";
import { call, exp, num, str } from "../test/builders";
import type { Expression } from "./types";
import {
  MAX_DEPTH,
  MAX_NODES,
  RuleValidationError,
  validateAction,
  validateExpression,
  validateRules,
} from "./validator";

const line = (issue: { path: string; message: string }) => `${issue.path}: ${issue.message}`;

function issuesOf(input: unknown): string[] {
  const result = validateRules(input);
  return result.ok ? [] : result.errors.map(line);
}

const event = (type: string) => exp("checkEventType", str(type));
const flag = exp("UPDATE_FLAG", str("f"), str("v"));

describe("validateRules", () => {
  it("accepts a valid rule set and returns it", () => {
    const rules = [call("IFTHEN", event("ENTER"), flag), call("IF", exp("and", event("SUBMIT"), num(1)), flag, flag)];
    expect(validateRules(rules)).toEqual({ ok: true, rules });
  });

  it.each<[string, unknown, string[]]>([
    [
      "the documented example",
      [call("DO"), call("DO"), call("IFTHEN", event("ENTER"), exp("IF", exp("hasStudyStatuss", str("active")), flag))],
      ['rules[2].data[1].exp.data[0].exp.name: unknown expression "hasStudyStatuss"'],
    ],
    ["a rule set that is not an array", { name: "DO" }, ["rules: must be an array of rules"]],
    ["null", null, ["rules: must be an array of rules"]],
    ["a rule that is not an object", [42], ["rules[0]: must be an action object"]],
    ["an unknown action", [call("DO_IT")], ['rules[0].name: unknown action "DO_IT"']],
    [
      "an expression as a rule",
      [call("checkEventType", str("ENTER"))],
      ['rules[0].name: "checkEventType" is an expression, not an action'],
    ],
    [
      "an action as a condition",
      [call("IFTHEN", flag)],
      ['rules[0].data[0].exp.name: "UPDATE_FLAG" is an action, not an expression'],
    ],
    [
      "an expression as an action",
      [call("DO", event("ENTER"))],
      ['rules[0].data[0].exp.name: "checkEventType" is an expression, not an action'],
    ],
    ["a missing name", [{ data: [] }], ["rules[0].name: is missing"]],
    ["a name that is not a string", [{ name: 3 }], ["rules[0].name: must be a string"]],
    ["data that is not an array", [{ name: "DO", data: {} }], ["rules[0].data: must be an array of arguments"]],
    [
      "too few arguments",
      [call("UPDATE_FLAG", str("f"))],
      ["rules[0].data: UPDATE_FLAG takes exactly 2 arguments, got 1"],
    ],
    ["too many arguments", [call("IF", num(1), flag, flag, flag)], ["rules[0].data: IF takes 2 to 3 arguments, got 4"]],
    [
      "an argument that is not an object",
      [{ name: "DO", data: [null] }],
      ["rules[0].data[0]: must be an argument object ({dtype, num | str | exp})"],
    ],
    [
      "a dtype that is not a string",
      [{ name: "REMOVE_FLAG", data: [{ dtype: 1, str: "f" }] }],
      ["rules[0].data[0].dtype: must be a string"],
    ],
    [
      "a num that is not a number",
      [{ name: "ADD_MESSAGE", data: [str("t"), { dtype: "num", num: "5" }] }],
      ["rules[0].data[1].num: must be a finite number"],
    ],
    [
      "a str that is not a string",
      [{ name: "REMOVE_FLAG", data: [{ dtype: "str", str: 5 }] }],
      ["rules[0].data[0].str: must be a string"],
    ],
    [
      "a missing exp",
      [{ name: "DO", data: [{ dtype: "exp" }] }],
      ['rules[0].data[0].exp: is missing: dtype "exp" needs an expression'],
    ],
    [
      "a null exp in a condition",
      [{ name: "IFTHEN", data: [{ dtype: "exp", exp: null }] }],
      ['rules[0].data[0].exp: is missing: dtype "exp" needs an expression'],
    ],
    [
      "an exp without dtype",
      [{ name: "IFTHEN", data: [{ exp: call("checkEventType", str("ENTER")) }] }],
      ["rules[0].data[0].exp: is given but dtype is missing, so it would be read as a string"],
    ],
    [
      "a non-literal where a literal is required",
      [call("IFTHEN", exp("hasSurveyKeyAssigned", exp("getCurrentStudySession")))],
      ['rules[0].data[0].exp.data[0]: surveyKey must be a literal string (dtype "str"), not an expression'],
    ],
    [
      "a number where a string is required",
      [call("REMOVE_FLAG", num(1))],
      ["rules[0].data[0]: key must be a string, got a number"],
    ],
    [
      "a string where a number is required",
      [call("ADD_MESSAGE", str("t"), str("1"))],
      ['rules[0].data[1]: scheduledFor must be a number (dtype "num"), got a string'],
    ],
    [
      "a missing dtype reads as a string",
      [{ name: "ADD_MESSAGE", data: [{ str: "t" }, { num: 5 }] }],
      ['rules[0].data[1]: scheduledFor must be a number (dtype "num"), got a string'],
    ],
    [
      "an expression of the wrong type",
      [call("REMOVE_FLAG", exp("getStudyEntryTime"))],
      ["rules[0].data[0].exp: key must be a string, but getStudyEntryTime returns a number"],
    ],
    [
      "a literal where only an expression fits",
      [call("IFTHEN", exp("checkConditionForOldResponses", num(1)))],
      ['rules[0].data[0].exp.data[0]: condition must be an expression (dtype "exp")'],
    ],
    [
      "a literal boolean value",
      [call("UPDATE_STUDY_VARIABLE_BOOLEAN", str("v"), num(1))],
      ["rules[0].data[1]: value must be an expression returning a boolean; a literal cannot be one"],
    ],
    [
      "a literal outside its set",
      [call("REMOVE_SURVEY_BY_KEY", str("s"), str("middle"))],
      ['rules[0].data[1]: position must be one of "first", "last", got "middle"'],
    ],
    [
      "an invalid month literal",
      [call("UPDATE_FLAG", str("t"), exp("getTsForNextStartOfMonth", num(13)))],
      ["rules[0].data[1].exp.data[0]: month: month number should be between 1 and 12"],
    ],
    ["a returnType that is not a string", [{ name: "DO", returnType: 5 }], ["rules[0].returnType: must be a string"]],
  ])("rejects %s", (_title, input, expected) => {
    expect(issuesOf(input)).toEqual(expected);
  });

  it("reports every problem, not just the first", () => {
    expect(issuesOf([call("NOPE"), call("REMOVE_FLAG"), call("DO", exp("ALSO_NOPE"))])).toEqual([
      'rules[0].name: unknown action "NOPE"',
      "rules[1].data: REMOVE_FLAG takes exactly 1 argument, got 0",
      'rules[2].data[0].exp.name: unknown action "ALSO_NOPE"',
    ]);
  });

  it("accepts literals in action positions (the reference ignored them) and a missing data list", () => {
    expect(validateRules([call("DO", str("a comment")), { name: "REMOVE_ALL_SURVEYS", data: null }]).ok).toBe(true);
  });

  function nested(depth: number): Expression {
    let condition: Expression = call("checkEventType", str("ENTER"));
    for (let i = 2; i < depth; i++) condition = call("not", { dtype: "exp", exp: condition });
    return call("IFTHEN", { dtype: "exp", exp: condition });
  }

  it(`accepts ${MAX_DEPTH} levels of nesting and rejects ${MAX_DEPTH + 1}`, () => {
    expect(validateRules([nested(MAX_DEPTH)]).ok).toBe(true);
    const issues = issuesOf([nested(MAX_DEPTH + 1)]);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(
      /^rules\[0\](\.data\[0\]\.exp){64}: nested too deeply: at most 64 levels of expressions$/,
    );
  });

  it(`rejects more than ${MAX_NODES} nodes once and stops`, () => {
    const big = Array.from({ length: MAX_NODES }, () => call("REMOVE_FLAG", str("f")));
    const issues = issuesOf(big);
    expect(issues).toEqual([
      `rules[5000]: too many nodes: a rule set may hold at most ${MAX_NODES} expressions and arguments`,
    ]);
  });

  it("never throws on exotic objects", () => {
    const hostile = new Proxy([], {
      get() {
        throw new Error("boom");
      },
    });
    expect(validateRules(hostile)).toEqual({
      ok: false,
      errors: [{ path: "rules", message: "could not be read as JSON data" }],
    });
  });
});

describe("validateExpression and validateAction", () => {
  it("validate an expression with a default or given path", () => {
    expect(validateExpression(call("eq", num(1), num(1)))).toEqual([]);
    expect(validateExpression(call("DO"))).toEqual([
      { path: "expression.name", message: '"DO" is an action, not an expression' },
    ]);
    expect(validateExpression(call("not"), "body.expr")).toEqual([
      { path: "body.expr.data", message: "not takes exactly 1 argument, got 0" },
    ]);
  });

  it("validates an action", () => {
    expect(validateAction(call("REMOVE_FLAG", str("a")))).toEqual([]);
    expect(validateAction("x")).toEqual([{ path: "action", message: "must be an action object" }]);
  });

  it("RuleValidationError lists every issue", () => {
    const error = new RuleValidationError([{ path: "rules[0].name", message: "unknown" }]);
    expect(error.message).toBe("invalid rules:\nrules[0].name: unknown");
    expect(error.issues).toHaveLength(1);
    expect(error).toBeInstanceOf(Error);
  });
});
