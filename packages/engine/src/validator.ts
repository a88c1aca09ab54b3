// Checks a rule set once, before it is stored or run, against the registry. Every problem is
// reported with the JSON path of the offending value. Never throws, whatever the input.
import type { ArgSpec, FunctionSpec, ValueType } from "./function-spec";
import { anyArg, argSpecAt } from "./function-spec";
import { actionSpec, expressionSpec } from "./registry";
import type { Expression, ValidationIssue, ValidationResult } from "./types";

/** Deeper nesting is never written by hand or by the rule editor; it only costs stack. */
export const MAX_DEPTH = 64;
/** Expressions plus arguments; the largest real rule sets are a few thousand. */
export const MAX_NODES = 10_000;

const EXTRA_ARG = anyArg("argument");

const TYPE_WORDS: Record<ValueType, string> = { str: "a string", num: "a number", bool: "a boolean", any: "any value" };

interface Walk {
  readonly issues: ValidationIssue[];
  nodes: number;
  stopped: boolean;
}

type Role = "action" | "expression";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function report(walk: Walk, path: string, message: string): void {
  walk.issues.push({ path, message });
}

function arityText(spec: FunctionSpec): string {
  const { minArgs: min, maxArgs: max } = spec;
  const plural = (n: number) => (n === 1 ? "argument" : "arguments");
  if (max === 0) return "takes no arguments";
  if (min === max) return `takes exactly ${min} ${plural(min)}`;
  if (max === Infinity) return `takes at least ${min} ${plural(min)}`;
  return `takes ${min} to ${max} arguments`;
}

function unknownName(name: string, role: Role): string {
  if (role === "action") {
    return expressionSpec(name)
      ? `"${name}" is an expression, not an action`
      : `unknown action ${JSON.stringify(name)}`;
  }
  return actionSpec(name) ? `"${name}" is an action, not an expression` : `unknown expression ${JSON.stringify(name)}`;
}

/** Counts a node; false (and the walk stops) once the limit is passed. */
function countNode(walk: Walk, path: string): boolean {
  if (walk.stopped) return false;
  walk.nodes++;
  if (walk.nodes <= MAX_NODES) return true;
  report(walk, path, `too many nodes: a rule set may hold at most ${MAX_NODES} expressions and arguments`);
  walk.stopped = true;
  return false;
}

/** Validates one expression node; returns its static return type ("any" when unknown). */
function checkNode(walk: Walk, node: unknown, path: string, role: Role, depth: number): ValueType {
  if (!countNode(walk, path)) return "any";
  if (depth > MAX_DEPTH) {
    report(walk, path, `nested too deeply: at most ${MAX_DEPTH} levels of expressions`);
    return "any";
  }
  if (!isRecord(node)) {
    report(walk, path, role === "action" ? "must be an action object" : "must be an expression object");
    return "any";
  }
  const name = node["name"];
  if (typeof name !== "string") {
    report(walk, `${path}.name`, name === undefined ? "is missing" : "must be a string");
    return "any";
  }
  const spec: FunctionSpec | undefined = role === "action" ? actionSpec(name) : expressionSpec(name);
  if (!spec) {
    report(walk, `${path}.name`, unknownName(name, role));
    return "any";
  }
  const returnType = node["returnType"];
  if (returnType !== undefined && returnType !== null && typeof returnType !== "string") {
    report(walk, `${path}.returnType`, "must be a string");
  }
  const data = node["data"];
  let args: unknown[] = [];
  if (Array.isArray(data)) args = data;
  else if (data !== undefined && data !== null) {
    report(walk, `${path}.data`, "must be an array of arguments");
    return "any";
  }
  if (args.length < spec.minArgs || args.length > spec.maxArgs) {
    report(walk, `${path}.data`, `${name} ${arityText(spec)}, got ${args.length}`);
  }
  for (let i = 0; i < args.length && !walk.stopped; i++) {
    checkArg(walk, args[i], `${path}.data[${i}]`, argSpecAt(spec, i) ?? EXTRA_ARG, depth);
  }
  if (spec.kind === "action") return "any";
  return spec.returnsFor ? spec.returnsFor(node as unknown as Expression) : spec.returns;
}

function checkArg(walk: Walk, arg: unknown, path: string, slot: ArgSpec, depth: number): void {
  if (!countNode(walk, path)) return;
  if (!isRecord(arg)) {
    report(walk, path, "must be an argument object ({dtype, num | str | exp})");
    return;
  }
  const dtype = arg["dtype"];
  if (dtype !== undefined && dtype !== null && typeof dtype !== "string") {
    report(walk, `${path}.dtype`, "must be a string");
    return;
  }
  const num = arg["num"];
  if (num !== undefined && num !== null && !(typeof num === "number" && Number.isFinite(num))) {
    report(walk, `${path}.num`, "must be a finite number");
  }
  const str = arg["str"];
  if (str !== undefined && str !== null && typeof str !== "string") report(walk, `${path}.str`, "must be a string");
  const exp = arg["exp"];

  if (dtype === "exp") {
    if (exp === undefined || exp === null) {
      report(walk, `${path}.exp`, 'is missing: dtype "exp" needs an expression');
      return;
    }
    if (slot.literalOnly) report(walk, path, `${slot.name} must be a literal string (dtype "str"), not an expression`);
    // a surplus argument (already reported) is checked as whatever it names
    const role =
      slot === EXTRA_ARG && isRecord(exp) && typeof exp["name"] === "string" && actionSpec(exp["name"])
        ? "action"
        : slot.role;
    if (role === "action") {
      checkNode(walk, exp, `${path}.exp`, "action", depth + 1);
      return;
    }
    const returns = checkNode(walk, exp, `${path}.exp`, "expression", depth + 1);
    if (slot.role === "expression" && slot.type !== "any" && returns !== "any" && returns !== slot.type) {
      const expName = isRecord(exp) ? String(exp["name"]) : "";
      report(
        walk,
        `${path}.exp`,
        `${slot.name} must be ${TYPE_WORDS[slot.type]}, but ${expName} returns ${TYPE_WORDS[returns]}`,
      );
    }
    return;
  }

  // a literal: dtype "num" is a number, anything else (missing included) reads as a string
  const isNum = dtype === "num";
  if (exp !== undefined && exp !== null) {
    report(
      walk,
      `${path}.exp`,
      `is given but dtype is ${dtype === undefined || dtype === null ? "missing" : JSON.stringify(dtype)}, so it would be read as a ${isNum ? "number" : "string"}`,
    );
  }
  if (slot.expressionOnly) {
    report(walk, path, `${slot.name} must be an expression (dtype "exp")`);
    return;
  }
  if (slot.literalOnly && dtype !== "str") {
    report(walk, path, `${slot.name} must be a literal string with dtype "str"`);
    return;
  }
  if (slot.role !== "expression") return;
  if (slot.type === "bool") {
    report(walk, path, `${slot.name} must be an expression returning a boolean; a literal cannot be one`);
    return;
  }
  if (slot.type === "str" && isNum) {
    report(walk, path, `${slot.name} must be a string, got a number`);
    return;
  }
  if (slot.type === "num" && !isNum) {
    report(walk, path, `${slot.name} must be a number (dtype "num"), got a string`);
    return;
  }
  const value = isNum ? (typeof num === "number" ? num : 0) : typeof str === "string" ? str : "";
  if (slot.oneOf && typeof value === "string" && !slot.oneOf.includes(value)) {
    report(
      walk,
      path,
      `${slot.name} must be one of ${slot.oneOf.map((v) => JSON.stringify(v)).join(", ")}, got ${JSON.stringify(value)}`,
    );
    return;
  }
  const problem = slot.checkLiteral?.(value);
  if (problem) report(walk, path, `${slot.name}: ${problem}`);
}

function run(check: (walk: Walk) => void, fallbackPath: string): ValidationIssue[] {
  const walk: Walk = { issues: [], nodes: 0, stopped: false };
  try {
    check(walk);
  } catch {
    // plain JSON cannot get here; exotic objects (throwing getters, proxies) can
    walk.issues.push({ path: fallbackPath, message: "could not be read as JSON data" });
  }
  return walk.issues;
}

/** Validates a rule set: an array of actions. Paths start with "rules". */
export function validateRules(input: unknown): ValidationResult {
  const errors = run((walk) => {
    if (!Array.isArray(input)) {
      report(walk, "rules", "must be an array of rules");
      return;
    }
    for (let i = 0; i < input.length && !walk.stopped; i++) checkNode(walk, input[i], `rules[${i}]`, "action", 1);
  }, "rules");
  return errors.length === 0 ? { ok: true, rules: input as Expression[] } : { ok: false, errors };
}

/** Validates one expression (a value, not an action). */
export function validateExpression(input: unknown, path = "expression"): ValidationIssue[] {
  return run((walk) => checkNode(walk, input, path, "expression", 1), path);
}

/** Validates one action, as applyAction receives it. */
export function validateAction(input: unknown, path = "action"): ValidationIssue[] {
  return run((walk) => checkNode(walk, input, path, "action", 1), path);
}

export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("\n");
}

/** Thrown by compileRules for an invalid rule set; `issues` holds every problem found. */
export class RuleValidationError extends Error {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super(`invalid rules:\n${formatIssues(issues)}`);
    this.name = "RuleValidationError";
    this.issues = issues;
  }
}
