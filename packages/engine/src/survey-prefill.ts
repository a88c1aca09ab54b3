// A survey's prefillRules: what the participant app shows already filled in when a participant
// opens a survey. Evaluated as case-backend's participant API does (pkg/study, resolvePrefillRules),
// with one table of rule names, so validation and evaluation read the same list. Reads only.
import { evaluateExpression } from "./apply-rules";
import { EMPTY_PARTICIPANT } from "./participant-state";
import type { EngineEnv, Expression, ExpressionArg, ResponseItem, SurveyItemResponse, SurveyResponse } from "./types";

/** The prefill of a survey: the item responses the app puts into the form before it is shown. */
export interface SurveyPrefill {
  responses: SurveyItemResponse[];
}

/** A prefill rule that was skipped, and why (for the server's log; the participant never sees it). */
export interface PrefillProblem {
  /** e.g. "prefillRules[2]" */
  path: string;
  message: string;
}

export interface PrefillOutcome {
  /** null when the survey has no prefill rules (case-backend then leaves `prefill` out). */
  prefill: SurveyPrefill | null;
  problems: PrefillProblem[];
}

/** What one evaluation of a survey's prefill rules works with. */
interface PrefillRun {
  readonly responses: SurveyItemResponse[];
  /** "" when there is no participant (a public survey opened anonymously). */
  readonly participantId: string;
  readonly env: EngineEnv;
  /** The last response per survey and time filter, read once per evaluation. */
  readonly lastResponses: Map<string, SurveyResponse | null>;
}

interface PrefillRuleSpec {
  /** Arguments the rule needs; with fewer it is skipped, as the reference skips it. */
  minArgs: number;
  /** Applies the rule to the prefill; returns a problem to report when it skipped it. */
  apply: (data: readonly ExpressionArg[], run: PrefillRun) => Promise<string | null> | string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An argument's `str`, "" when absent (Go reads a missing field as its zero value). */
const strOf = (arg: ExpressionArg | undefined): string => (typeof arg?.str === "string" ? arg.str : "");

/**
 * Go's `%f`: six decimals, never an exponent. toFixed switches to exponent notation from 1e21 on,
 * where every double is a whole number, so the digits come from BigInt there.
 */
export function formatGoFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN";
  if (Math.abs(value) < 1e21) return value.toFixed(6);
  return `${BigInt(value).toString()}.000000`;
}

/** Sets a slot (`rg.scg.1`) of an item's response to a value, creating the item and the path as needed. */
function prefillSlotWithValue(data: readonly ExpressionArg[], run: PrefillRun): string | null {
  const itemKey = strOf(data[0]);
  const slotKey = strOf(data[1]);
  const target = data[2];
  let item = run.responses.find((response) => response.key === itemKey);
  if (!item) {
    item = { key: itemKey };
    run.responses.push(item);
  }
  const [rootKey = "", ...path] = slotKey.split(".");
  item.response ??= { key: rootKey };
  let slot: ResponseItem = item.response;
  for (const key of path) {
    let child = slot.items?.find((candidate) => candidate.key === key);
    if (!child) {
      child = { key };
      (slot.items ??= []).push(child);
    }
    slot = child;
  }
  if (target?.dtype === "num") {
    slot.dtype = "number";
    slot.value = formatGoFloat(typeof target.num === "number" ? target.num : 0);
  } else {
    slot.value = strOf(target);
  }
  return null;
}

/** The time filter's value: a number, or an expression (timestampWithOffset…) evaluated without a participant. */
async function sinceOf(arg: ExpressionArg, env: EngineEnv): Promise<number | string> {
  if (arg.dtype === "num") return typeof arg.num === "number" ? arg.num : 0;
  if (arg.dtype !== "exp") return `time filter is not a number (dtype "${arg.dtype ?? "str"}")`;
  if (!isObject(arg.exp)) return "time filter expression is missing";
  // As the reference, which resolves it in an empty evaluation context: no participant, no event.
  const { value, error } = await evaluateExpression(arg.exp, EMPTY_PARTICIPANT, { type: "CUSTOM", studyKey: "" }, env);
  if (error !== undefined) return `time filter failed: ${error}`;
  if (typeof value !== "number" || !Number.isFinite(value)) return "time filter is not a number";
  return value;
}

/**
 * Copies an item's answer from the participant's last response to its survey (the item key's first
 * part), optionally only from a response that arrived after a time (Unix seconds, exclusive).
 */
async function prefillItemWithLastResponse(data: readonly ExpressionArg[], run: PrefillRun): Promise<string | null> {
  // Anonymous (public survey, no temporary participant): there is no last response to read.
  if (run.participantId === "") return null;
  const itemKey = strOf(data[0]);
  const surveyKey = itemKey.split(".")[0] ?? "";
  let since = 0;
  const filter = data[1];
  if (filter !== undefined) {
    const resolved = await sinceOf(filter, run.env);
    if (typeof resolved === "string") return resolved;
    since = Math.trunc(resolved);
  }
  // Per survey and time filter: the reference keeps one per survey, so a second rule with another
  // filter could get a response outside it; here each filter gets its own.
  const cacheKey = `${surveyKey}\u0000${since}`;
  let last = run.lastResponses.get(cacheKey);
  if (last === undefined) {
    try {
      const [found] = await run.env.services.findOldResponses({
        participantId: run.participantId,
        surveyKey,
        since,
        limit: 1,
      });
      last = found ?? null;
    } catch (error) {
      return `reading the last response failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    run.lastResponses.set(cacheKey, last);
  }
  const answer = last?.responses?.find((response) => response.key === itemKey);
  if (answer) run.responses.push(answer);
  return null;
}

/** Every prefill rule case-backend knows, by name. */
const PREFILL_RULES: Readonly<Record<string, PrefillRuleSpec>> = {
  PREFILL_SLOT_WITH_VALUE: { minArgs: 3, apply: prefillSlotWithValue },
  PREFILL_ITEM_WITH_LAST_RESPONSE: { minArgs: 1, apply: prefillItemWithLastResponse },
};

export const prefillRuleNames: readonly string[] = Object.keys(PREFILL_RULES);

/**
 * Evaluates a survey's prefillRules for a participant (participantId "" for none), in order. A
 * rule that cannot apply (unknown name, too few arguments, a time filter that is no number) is
 * skipped and reported; the reference answers the whole request with a 500 for an unknown name,
 * and skips the others silently.
 */
export async function resolvePrefillRules(
  rules: unknown,
  participantId: string,
  env: EngineEnv,
): Promise<PrefillOutcome> {
  const problems: PrefillProblem[] = [];
  if (rules === undefined || rules === null) return { prefill: null, problems };
  if (!Array.isArray(rules)) {
    return { prefill: null, problems: [{ path: "prefillRules", message: "prefillRules is not a list" }] };
  }
  if (rules.length === 0) return { prefill: null, problems };
  const run: PrefillRun = { responses: [], participantId, env, lastResponses: new Map() };
  for (const [index, rule] of (rules as unknown[]).entries()) {
    const path = `prefillRules[${index}]`;
    if (!isObject(rule) || typeof rule["name"] !== "string") {
      problems.push({ path, message: "not an expression with a name" });
      continue;
    }
    const { name } = rule as unknown as Expression;
    const spec = Object.hasOwn(PREFILL_RULES, name) ? PREFILL_RULES[name] : undefined;
    if (!spec) {
      problems.push({ path, message: `unknown prefill rule "${name}" (known: ${prefillRuleNames.join(", ")})` });
      continue;
    }
    const data = Array.isArray(rule["data"])
      ? (rule["data"] as unknown[]).map((arg) => (isObject(arg) ? (arg as ExpressionArg) : {}))
      : [];
    if (data.length < spec.minArgs) {
      problems.push({ path, message: `${name} needs at least ${spec.minArgs} arguments, got ${data.length}` });
      continue;
    }
    const problem = await spec.apply(data, run);
    if (problem !== null) problems.push({ path, message: `${name}: ${problem}` });
  }
  return { prefill: { responses: run.responses }, problems };
}

/**
 * Whether a survey definition (its root item group) holds an item of this key, searched as the
 * reference searches: item keys are paths (`intake.G1.Q2`), so only a group whose key prefixes
 * the wanted one is entered.
 */
export function surveyHasItem(group: unknown, key: string): boolean {
  if (!isObject(group)) return false;
  if (group["key"] === key) return true;
  const items = group["items"];
  if (!Array.isArray(items)) return false;
  for (const item of items as unknown[]) {
    if (!isObject(item) || typeof item["key"] !== "string") continue;
    if (item["key"] === key) return true;
    if (key.startsWith(`${item["key"]}.`)) return surveyHasItem(item, key);
  }
  return false;
}

/**
 * Drops the prefilled items that the survey's current version no longer has (a prefill from an
 * older version's last response, or a rule left behind after an item was removed).
 */
export function dropPrefillsMissingFromSurvey(prefill: SurveyPrefill, surveyDefinition: unknown): SurveyPrefill {
  return { responses: prefill.responses.filter((item) => surveyHasItem(surveyDefinition, item.key)) };
}
