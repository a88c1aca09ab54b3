// Renders the engine's bulk prefilter (a RowPredicate over participant fields) as a SQL condition
// on the participants table. Every leaf renders to true or false, never NULL, so `not` means what
// it says. Column names and JSON paths come from the field table and from fixed templates; every
// key and constant of the rules is a bound parameter.
import { sql, type SQL } from "drizzle-orm";
import type { CompareOp, RowPredicate, ValueTest } from "@studyflow/engine";
import { PARTICIPANT_FIELD_COLUMNS } from "@studyflow/db";

const SQL_OPS: Record<CompareOp, string> = { eq: "=", lt: "<", lte: "<=", gt: ">", gte: ">=" };
const JSONPATH_OPS: Record<CompareOp, string> = { eq: "==", lt: "<", lte: "<=", gt: ">", gte: ">=" };

const column = (field: keyof typeof PARTICIPANT_FIELD_COLUMNS) => sql.raw(PARTICIPANT_FIELD_COLUMNS[field].column);
const op = (compare: CompareOp) => sql.raw(SQL_OPS[compare]);

/** A property name of a stored survey or message, spelled into a JSON path; only plain names. */
function propertyPath(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`prefilter: unexpected property name ${name}`);
  return `@.${name}`;
}

const NEGATED: Partial<Record<CompareOp, CompareOp>> = { lt: "gte", lte: "gt", gt: "lte", gte: "lt" };

/**
 * Tests of one JSON value as a jsonpath filter on `value` (a path such as `@` or `@.validUntil`),
 * true when one of them passes; constants go into `vars`. A path compares only items of one type
 * (anything else is unknown, which a filter drops), so `@.x < $v` already means "a number below
 * v". Strings are never ordered in a path: the engine does not produce such tests.
 */
function pathTests(value: string, tests: readonly ValueTest[], vars: Record<string, unknown>): string {
  const variable = (constant: string | number) => {
    const name = `v${Object.keys(vars).length}`;
    vars[name] = constant;
    return `$${name}`;
  };
  let rest = [...tests];
  const parts: string[] = [];
  // "missing, or a number below v" is one negated comparison: a missing value compares false, and
  // so does null; text and other types stay unknown, and unknown negated is still unknown
  const missing = rest.findIndex((test) => test.kind === "missing");
  const ordered = rest.findIndex((test) => test.kind === "compare" && test.type === "number" && test.op !== "eq");
  const pair = rest[ordered];
  if (missing >= 0 && pair?.kind === "compare") {
    parts.push(`!(${value} ${JSONPATH_OPS[NEGATED[pair.op] as CompareOp]} ${variable(pair.value)})`);
    rest = rest.filter((_, i) => i !== missing && i !== ordered);
  }
  for (const test of rest) {
    switch (test.kind) {
      case "missing":
        parts.push(`!exists(${value}) || ${value} == null`);
        break;
      case "other-type":
        parts.push(`${value}.type() != "${test.type}" && ${value}.type() != "null"`);
        break;
      case "compare":
        if (test.type === "string" && test.op !== "eq")
          throw new Error("prefilter: ordered string test in a JSON path");
        parts.push(`${value} ${JSONPATH_OPS[test.op]} ${variable(test.value)}`);
        break;
    }
  }
  return parts.map((part) => `(${part})`).join(" || ");
}

/**
 * A JSON parameter. drizzle hands jsonb parameters to the driver as they are, so the text goes to
 * the server and the parameter is typed jsonb there: nothing is parsed per row.
 */
const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

/** `jsonb_path_exists` with the path inline (parsed once per statement) and its constants as a parameter. */
function pathExists(target: SQL, path: string, vars: Record<string, unknown>): SQL {
  // the path text is built from fixed templates and checked property names only
  const literal = sql.raw(`'${path.replaceAll("'", "''")}'::jsonpath`);
  return sql`coalesce(jsonb_path_exists(${target}, ${literal}, ${json(vars)}, true), false)`;
}

/** The map's entry under `key` (absent or JSON null counts as missing). */
function entryTest(target: SQL, key: string, test: ValueTest): SQL {
  const value = sql`${target} -> ${key}::text`;
  switch (test.kind) {
    case "missing":
      return sql`coalesce(jsonb_typeof(${value}), 'null') = 'null'`;
    case "other-type":
      return sql`coalesce(jsonb_typeof(${value}) not in ('null', ${test.type}::text), false)`;
    case "compare":
      if (test.type === "string") {
        // containment is exact for strings and never NULL
        if (test.op === "eq") return sql`${target} @> ${json({ [key]: test.value })}`;
        return sql`case when jsonb_typeof(${value}) = 'string'
          then (${target} ->> ${key}::text) collate "C" ${op(test.op)} ${test.value}::text else false end`;
      }
      return sql`case when jsonb_typeof(${value}) = 'number'
        then (${value})::numeric ${op(test.op)} ${test.value}::numeric else false end`;
  }
}

export function renderPrefilter(predicate: RowPredicate): SQL {
  switch (predicate.kind) {
    case "const":
      return predicate.value ? sql`true` : sql`false`;
    case "and":
    case "or":
      return sql`(${sql.join(
        predicate.items.map(renderPrefilter),
        sql.raw(predicate.kind === "and" ? " and " : " or "),
      )})`;
    case "not":
      return sql`not ${renderPrefilter(predicate.item)}`;
    case "column": {
      if (typeof predicate.value === "number") {
        return sql`${column(predicate.field)} ${op(predicate.op)} ${predicate.value}::numeric`;
      }
      // "C" orders text by its UTF-8 bytes, which is code point order, as the engine compares
      const collated = predicate.op === "eq" ? column(predicate.field) : sql`${column(predicate.field)} collate "C"`;
      return sql`${collated} ${op(predicate.op)} ${predicate.value}::text`;
    }
    case "has-key":
      return sql`${column(predicate.field)} ? ${predicate.key}::text`;
    case "entry":
      return entryTest(column(predicate.field), predicate.key, predicate.test);
    case "some-value": {
      const vars: Record<string, unknown> = {};
      return pathExists(column(predicate.field), `$.* ? (${pathTests("@", predicate.tests, vars)})`, vars);
    }
    case "some-element": {
      const { prop, value } = predicate.match;
      if (!predicate.where) {
        // containment finds an element with that property value, and an index could serve it
        return sql`${column(predicate.field)} @> ${json([{ [prop]: value }])}`;
      }
      const vars: Record<string, unknown> = { m: value };
      const tests = pathTests(propertyPath(predicate.where.prop), predicate.where.tests, vars);
      return pathExists(column(predicate.field), `$[*] ? (${propertyPath(prop)} == $m && (${tests}))`, vars);
    }
  }
}
