// Builders of the participant readers' prefilter forms (their `prefilter` in the registry): how a
// reader's value, for argument values fixed for a batch, looks as predicates over stored rows.
// Each form must be sound: wherever the engine would find the reader true (or a comparison true,
// false or failing), the matching predicate must hold. Over-approximating is allowed; missing a
// row is not.
import type { ComparisonOutcomes, ParticipantForm } from "./function-spec";
import type { ColumnField, CompareOp, ListField, MapField, RowPredicate, ValueTest } from "./row-predicate";
import { FALSE, TRUE, allOf, anyOf, compareValues, complement, constant, isSendable, negate } from "./row-predicate";

/** A boolean reader whose predicate is exact: false exactly where it is not true. */
export function exactly(holds: RowPredicate): ParticipantForm {
  return { kind: "bool", whenTrue: holds, whenFalse: negate(holds) };
}

const sameType = (a: unknown, b: unknown) => typeof a === typeof b;

/**
 * A scalar column that always holds a value of `type` (the text columns, enteredAt): comparing it
 * with a constant of another type fails for every row, as the engine's comparisons do.
 */
export function columnValue(field: ColumnField, type: "string" | "number"): ParticipantForm {
  return {
    kind: "value",
    compare: (op, value) => {
      if (!isSendable(value)) return null;
      if (typeof value !== type) return { true: FALSE, false: FALSE, failed: TRUE };
      return {
        true: { kind: "column", field, op, value },
        false: anyOf(...complement(op).map((other): RowPredicate => ({ kind: "column", field, op: other, value }))),
        failed: FALSE,
      };
    },
  };
}

/**
 * A value the reader takes from stored JSON, or `fallback` where there is none (a missing key, a
 * missing element, a missing or null property). `stored(tests)` is where the stored value passes
 * one of the tests; `none` where the reader finds no stored value.
 */
function storedValue(
  stored: (tests: ValueTest[]) => RowPredicate,
  none: RowPredicate,
  fallback: string | number,
): ParticipantForm {
  return {
    kind: "value",
    compare: (op: CompareOp, value: string | number): ComparisonOutcomes | null => {
      if (!isSendable(value)) return null;
      const type = typeof value === "string" ? "string" : "number";
      const fallbackHolds = sameType(fallback, value) && compareValues(fallback, op, value);
      const fallbackFails = !sameType(fallback, value);
      return {
        true: anyOf(allOf(none, constant(fallbackHolds)), stored([{ kind: "compare", type, op, value }])),
        false: anyOf(
          allOf(none, constant(!fallbackHolds && !fallbackFails)),
          stored(complement(op).map((other): ValueTest => ({ kind: "compare", type, op: other, value }))),
        ),
        failed: anyOf(allOf(none, constant(fallbackFails)), stored([{ kind: "other-type", type }])),
      };
    },
  };
}

/** `map[key]`, or `fallback` when the key is absent or its value is null (the readers' `?? fallback`). */
export function entryValue(field: MapField, key: string, fallback: string | number): ParticipantForm {
  return storedValue(
    (tests) => anyOf(...tests.map((test): RowPredicate => ({ kind: "entry", field, key, test }))),
    { kind: "entry", field, key, test: { kind: "missing" } },
    fallback,
  );
}

/**
 * `prop` of the first element whose `matchProp` equals `matchValue`, or `fallback` when there is
 * no such element or its property is missing or null. Any matching element stands in for the
 * first: the predicate may select more rows, never fewer. Comparisons with text are not translated.
 */
export function elementValue(
  field: ListField,
  matchProp: string,
  matchValue: string,
  prop: string,
  fallback: number,
): ParticipantForm {
  const match = { prop: matchProp, value: matchValue };
  const some = (tests: readonly ValueTest[]): RowPredicate => ({
    kind: "some-element",
    field,
    match,
    where: { prop, tests },
  });
  const form = storedValue(
    (tests) => some(tests),
    anyOf(negate({ kind: "some-element", field, match }), some([{ kind: "missing" }])),
    fallback,
  );
  // element properties are tested in a JSON path, where text is not ordered as the engine orders it
  return form.kind === "value"
    ? { kind: "value", compare: (op, value) => (typeof value === "string" ? null : form.compare(op, value)) }
    : form;
}
