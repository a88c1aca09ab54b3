// The predicate a bulk prefilter produces: a small tree over the stored participant state that the
// database layer renders as SQL (see sql-prefilter.ts). It speaks of state fields, not columns, so
// the engine stays free of any database code; the renderer maps fields to columns.
import { compareUtf8, textProblem } from "./text-values";

export type CompareOp = "eq" | "lt" | "lte" | "gt" | "gte";
/** The participant fields stored as JSON objects. */
export type MapField = "flags" | "linkingCodes" | "lastSubmissions";
/** The participant fields stored as JSON arrays of objects. */
export type ListField = "assignedSurveys" | "messages";
/** The scalar participant fields a predicate may compare. */
export type ColumnField = "studyStatus" | "currentStudySession" | "enteredAt";

/** A test of one JSON value: a map entry, a map's value, or a property of a list element. */
export type ValueTest =
  /** The value has the type and compares so with the constant (strings by code point, as the engine does). */
  | {
      readonly kind: "compare";
      readonly type: "string" | "number";
      readonly op: CompareOp;
      readonly value: string | number;
    }
  /** The value is absent or JSON null. */
  | { readonly kind: "missing" }
  /** The value is present, not null, and of a JSON type other than `type`. */
  | { readonly kind: "other-type"; readonly type: "string" | "number" };

/**
 * A condition on one stored participant row. Every leaf is true or false for every row, never
 * unknown: a renderer must keep it so (SQL's NULL), because `not` is applied to leaves.
 */
export type RowPredicate =
  | { readonly kind: "const"; readonly value: boolean }
  | { readonly kind: "and" | "or"; readonly items: readonly RowPredicate[] }
  | { readonly kind: "not"; readonly item: RowPredicate }
  /** A scalar field compared with a constant: a string for the text fields, a number for enteredAt. */
  | { readonly kind: "column"; readonly field: ColumnField; readonly op: CompareOp; readonly value: string | number }
  /** The map has the key (whatever its value). */
  | { readonly kind: "has-key"; readonly field: MapField; readonly key: string }
  /** The map's entry under the key passes the test ("missing" when the key is absent). */
  | { readonly kind: "entry"; readonly field: MapField; readonly key: string; readonly test: ValueTest }
  /** Some value of the map passes one of the tests. */
  | { readonly kind: "some-value"; readonly field: MapField; readonly tests: readonly ValueTest[] }
  /**
   * Some element of the list has `match.prop` equal to `match.value` and, with `where`, a value of
   * `where.prop` that passes one of `where.tests`.
   */
  | {
      readonly kind: "some-element";
      readonly field: ListField;
      readonly match: { readonly prop: string; readonly value: string | number };
      readonly where?: { readonly prop: string; readonly tests: readonly ValueTest[] };
    };

export const TRUE: RowPredicate = Object.freeze({ kind: "const", value: true });
export const FALSE: RowPredicate = Object.freeze({ kind: "const", value: false });

const isConst = (p: RowPredicate, value: boolean) => p.kind === "const" && p.value === value;

/** Conjunction, flattened, with constants folded and repeated items dropped. */
export function allOf(...items: RowPredicate[]): RowPredicate {
  return combine("and", items);
}

/** Disjunction, flattened, with constants folded and repeated items dropped. */
export function anyOf(...items: RowPredicate[]): RowPredicate {
  return combine("or", items);
}

function combine(kind: "and" | "or", items: readonly RowPredicate[]): RowPredicate {
  const neutral = kind === "and";
  let kept: RowPredicate[] = [];
  const seen = new Set<string>();
  for (const item of items.flatMap((p) => (p.kind === kind ? p.items : [p]))) {
    // the absorbing constant decides the whole; the neutral one drops out
    if (isConst(item, !neutral)) return item;
    if (isConst(item, neutral)) continue;
    const key = JSON.stringify(item);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(item);
  }
  // a leaf and its negation: one of them always holds (leaves are never unknown)
  if (kept.some((p) => p.kind === "not" && seen.has(JSON.stringify(p.item)))) return neutral ? FALSE : TRUE;
  if (kind === "or") kept = mergeElementTests(kept);
  else kept = dropContradicted(kept, seen);
  if (kept.length === 0) return neutral ? TRUE : FALSE;
  if (kept.length === 1) return kept[0] as RowPredicate;
  return { kind, items: kept };
}

/**
 * In a conjunction, a disjunct that negates one of the conjuncts can never be what makes its
 * disjunction true: `a and (not a or b)` is `a and b`. Keeps the SQL the database runs per row short.
 */
function dropContradicted(conjuncts: RowPredicate[], keys: ReadonlySet<string>): RowPredicate[] {
  const contradicts = (p: RowPredicate) => p.kind === "not" && keys.has(JSON.stringify(p.item));
  const simplified = conjuncts.map((p) =>
    p.kind === "or" && p.items.some(contradicts) ? anyOf(...p.items.filter((q) => !contradicts(q))) : p,
  );
  // "some element matches" is implied by "some element matches and passes a test"
  const narrower = new Set(
    simplified.flatMap((p) => (p.kind === "some-element" && p.where ? [JSON.stringify([p.field, p.match])] : [])),
  );
  return simplified.filter(
    (p) => !(p.kind === "some-element" && !p.where && narrower.has(JSON.stringify([p.field, p.match]))),
  );
}

/** `some element with k whose p passes A` or `… passes B` is one element test with A and B. */
function mergeElementTests(disjuncts: RowPredicate[]): RowPredicate[] {
  const merged: RowPredicate[] = [];
  const byElement = new Map<string, number>();
  for (const p of disjuncts) {
    if (p.kind !== "some-element" || !p.where) {
      merged.push(p);
      continue;
    }
    const key = JSON.stringify([p.field, p.match, p.where.prop]);
    const at = byElement.get(key);
    const earlier = at === undefined ? undefined : merged[at];
    if (earlier?.kind === "some-element" && earlier.where) {
      merged[at as number] = {
        ...earlier,
        where: { ...earlier.where, tests: [...earlier.where.tests, ...p.where.tests] },
      };
    } else {
      byElement.set(key, merged.length);
      merged.push(p);
    }
  }
  return merged;
}

export function negate(p: RowPredicate): RowPredicate {
  if (p.kind === "const") return p.value ? FALSE : TRUE;
  if (p.kind === "not") return p.item;
  return { kind: "not", item: p };
}

export const constant = (value: boolean): RowPredicate => (value ? TRUE : FALSE);

/** `a op b` with the engine's semantics for two strings or two numbers (NaN compares false). */
export function compareValues(a: string | number, op: CompareOp, b: string | number): boolean {
  let order: number;
  if (typeof a === "string" && typeof b === "string") order = compareUtf8(a, b);
  else if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) || Number.isNaN(b)) return false;
    order = a < b ? -1 : a > b ? 1 : 0;
  } else return false;
  switch (op) {
    case "eq":
      return order === 0;
    case "lt":
      return order < 0;
    case "lte":
      return order <= 0;
    case "gt":
      return order > 0;
    case "gte":
      return order >= 0;
  }
}

/** `b op' a` holds exactly when `a op b` does. */
export function flipped(op: CompareOp): CompareOp {
  return op === "lt" ? "gt" : op === "gt" ? "lt" : op === "lte" ? "gte" : op === "gte" ? "lte" : "eq";
}

/** The comparisons that hold exactly when `op` does not, for two values of one type (no NaN). */
export function complement(op: CompareOp): CompareOp[] {
  return op === "eq" ? ["lt", "gt"] : op === "lt" ? ["gte"] : op === "lte" ? ["gt"] : op === "gt" ? ["lte"] : ["lt"];
}

/**
 * Whether a constant can be sent to the database as it is: a finite number, or text the database
 * can store (no NUL, no lone surrogate). Anything else leaves the comparison untranslated.
 */
export function isSendable(value: unknown): value is string | number {
  if (typeof value === "number") return Number.isFinite(value);
  return typeof value === "string" && textProblem(value) === null;
}
