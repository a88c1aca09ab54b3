import { sql, type SQL } from "drizzle-orm";
import { Invalid } from "../errors";
import {
  CASE_FIELDS,
  resolveCaseField,
  type CaseFilterCollection,
  type CaseValueType,
  type ResolvedField,
} from "./fields";

/**
 * The comparison operators of the subset (Mongo's names and meaning). `$exists` is offered for map
 * entries only (`{"flags.consent": {"$exists": true}}`), where a key may be missing.
 */
export const CASE_FILTER_OPERATORS = ["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"] as const;
type Operator = (typeof CASE_FILTER_OPERATORS)[number];

/** Nesting of `$and`/`$or` a filter may have; case-admin's filters are flat, this only stops abuse. */
export const MAX_FILTER_DEPTH = 8;
/** Field conditions one filter may hold in all. */
export const MAX_FILTER_CONDITIONS = 200;
/** Values one `$in`/`$nin` may list. */
export const MAX_IN_VALUES = 1_000;

type Scalar = string | number | null;

interface Budget {
  conditions: number;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function fieldNames(target: CaseFilterCollection): string {
  return Object.entries(CASE_FIELDS[target])
    .map(([name, field]) => (field.shape === "scalar" ? name : `${name}.<key>`))
    .join(", ");
}

/** A value of the field's type; null where Mongo's null (a missing field) has a meaning. */
function checkValue(where: string, type: CaseValueType, value: unknown, allowNull: boolean): Scalar {
  if (value === null && allowNull) return null;
  if (type === "string") {
    if (typeof value !== "string") throw new Invalid(`${where}: expected a string`);
    return value;
  }
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new Invalid(`${where}: expected whole Unix seconds (an integer)`);
  }
  return value;
}

function checkList(where: string, type: CaseValueType, value: unknown, allowNull: boolean): Scalar[] {
  if (!Array.isArray(value)) throw new Invalid(`${where}: expected an array`);
  if (value.length > MAX_IN_VALUES) throw new Invalid(`${where}: at most ${MAX_IN_VALUES} values`);
  return value.map((item, index) => checkValue(`${where}.${index}`, type, item, allowNull));
}

const anyOf = (parts: SQL[]): SQL => (parts.length === 0 ? sql`false` : sql.join(parts, sql` or `));

/** `expression IN (values)` with SQL's NULL for Mongo's null; an empty list selects nothing. */
function inList(expression: SQL, values: Scalar[], cast: SQL): SQL {
  const present = values.filter((value): value is string | number => value !== null);
  const parts: SQL[] = [];
  if (present.length > 0)
    parts.push(
      sql`${expression} in (${sql.join(
        present.map((value) => sql`${value}${cast}`),
        sql`, `,
      )})`,
    );
  if (present.length !== values.length) parts.push(sql`${expression} is null`);
  return parts.length === 0 ? sql`false` : sql`(${anyOf(parts)})`;
}

/** A condition on a column or map entry, where a missing value (SQL NULL) is Mongo's missing field. */
function compareValue(
  where: string,
  expression: SQL,
  type: CaseValueType,
  operator: Operator,
  operand: unknown,
  canBeMissing: boolean,
): SQL {
  const cast = type === "string" ? sql`::text` : sql`::numeric`;
  switch (operator) {
    case "$eq": {
      const value = checkValue(where, type, operand, true);
      if (value === null) return canBeMissing ? sql`${expression} is null` : sql`false`;
      return sql`${expression} = ${value}${cast}`;
    }
    case "$ne": {
      const value = checkValue(where, type, operand, true);
      if (value === null) return canBeMissing ? sql`${expression} is not null` : sql`true`;
      return canBeMissing ? sql`${expression} is distinct from ${value}${cast}` : sql`${expression} <> ${value}${cast}`;
    }
    case "$in":
      return inList(expression, checkList(where, type, operand, true), cast);
    case "$nin": {
      const list = inList(expression, checkList(where, type, operand, true), cast);
      // NOT of a NULL is NULL: a missing entry not in the list is selected, as in Mongo.
      return sql`coalesce(not ${list}, true)`;
    }
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte": {
      const value = checkValue(where, type, operand, false);
      const op = { $gt: sql`>`, $gte: sql`>=`, $lt: sql`<`, $lte: sql`<=` }[operator];
      // Byte order, as Mongo compares strings, whatever the database's collation.
      const left = type === "string" ? sql`(${expression}) collate "C"` : expression;
      return sql`coalesce(${left} ${op} ${value}${cast}, false)`;
    }
    case "$exists": {
      if (!canBeMissing) throw new Invalid(`${where}: $exists is offered on map entries (flags.<key>, …) only`);
      if (typeof operand !== "boolean") throw new Invalid(`${where}: $exists expects true or false`);
      return operand ? sql`${expression} is not null` : sql`${expression} is null`;
    }
  }
}

/** `data.key` / `data.value`: some element of the array has the property with that value. */
function compareElements(where: string, resolved: ResolvedField, operator: Operator, operand: unknown): SQL {
  const property = resolved.subKey ?? "";
  const has = (value: string) =>
    sql`${resolved.field.expression} @> jsonb_build_array(jsonb_build_object(${property}::text, ${value}::text))`;
  switch (operator) {
    case "$eq":
      return has(checkValue(where, "string", operand, false) as string);
    case "$ne":
      return sql`not (${has(checkValue(where, "string", operand, false) as string)})`;
    case "$in":
      return sql`(${anyOf(checkList(where, "string", operand, false).map((value) => has(value as string)))})`;
    case "$nin":
      return sql`not (${anyOf(checkList(where, "string", operand, false).map((value) => has(value as string)))})`;
    default:
      throw new Invalid(
        `${where}: ${operator} is not offered on ${where.replace(/^filter\./, "")}; use $eq, $ne, $in or $nin`,
      );
  }
}

function fieldCondition(target: CaseFilterCollection, path: string, condition: unknown, budget: Budget): SQL {
  const where = `filter.${path}`;
  const resolved = resolveCaseField(target, path);
  if (!resolved)
    throw new Invalid(`filter: unknown field "${path}" (${target} can be filtered on ${fieldNames(target)})`);

  const operations: [Operator, unknown][] = [];
  if (isPlainObject(condition) && Object.keys(condition).some((key) => key.startsWith("$"))) {
    for (const [key, operand] of Object.entries(condition)) {
      if (!(CASE_FILTER_OPERATORS as readonly string[]).includes(key)) {
        throw new Invalid(
          key.startsWith("$")
            ? `${where}: unsupported operator "${key}" (supported: ${CASE_FILTER_OPERATORS.join(", ")})`
            : `${where}: "${key}" cannot be mixed with operators`,
        );
      }
      operations.push([key as Operator, operand]);
    }
  } else if (isPlainObject(condition) || Array.isArray(condition)) {
    throw new Invalid(`${where}: compare with a string, a number, null or an operator object`);
  } else {
    operations.push(["$eq", condition]);
  }

  const parts = operations.map(([operator, operand]) => {
    budget.conditions += 1;
    if (budget.conditions > MAX_FILTER_CONDITIONS)
      throw new Invalid(`filter: at most ${MAX_FILTER_CONDITIONS} conditions`);
    const field = resolved.field;
    if (field.shape === "elements") return compareElements(where, resolved, operator, operand);
    if (field.shape === "map") {
      const entry =
        field.type === "seconds"
          ? sql`(${field.expression} ->> ${resolved.subKey ?? ""}::text)::numeric`
          : sql`(${field.expression} ->> ${resolved.subKey ?? ""}::text)`;
      const condition = compareValue(where, entry, field.type, operator, operand, true);
      if (field.indexed && operator === "$eq" && typeof operand === "string") {
        // the same rows (the map holds strings), found through the map's GIN index
        return sql`(${condition} and ${field.expression} @> jsonb_build_object(${resolved.subKey ?? ""}::text, ${operand}::text))`;
      }
      return condition;
    }
    return compareValue(where, field.expression, field.type, operator, operand, field.nullable);
  });
  return parts.length === 1 ? parts[0]! : sql`(${sql.join(parts, sql` and `)})`;
}

function documentCondition(
  target: CaseFilterCollection,
  filter: unknown,
  where: string,
  depth: number,
  budget: Budget,
): SQL {
  if (!isPlainObject(filter)) throw new Invalid(`${where}: expected an object of conditions`);
  if (depth > MAX_FILTER_DEPTH) throw new Invalid(`filter: $and/$or nested deeper than ${MAX_FILTER_DEPTH} levels`);
  const parts: SQL[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0) {
        throw new Invalid(`${where}.${key}: expected a non-empty array of conditions`);
      }
      const branches = value.map((branch, index) =>
        documentCondition(target, branch, `${where}.${key}.${index}`, depth + 1, budget),
      );
      parts.push(sql`(${sql.join(branches, key === "$and" ? sql` and ` : sql` or `)})`);
    } else if (key.startsWith("$")) {
      throw new Invalid(
        `filter: unsupported operator "${key}" (supported: $and, $or, ${CASE_FILTER_OPERATORS.join(", ")})`,
      );
    } else {
      parts.push(fieldCondition(target, key, value, budget));
    }
  }
  return parts.length === 0 ? sql`true` : sql`(${sql.join(parts, sql` and `)})`;
}

/**
 * case-admin's Mongo-style `filter` as a parameterised SQL condition on the target's table. Values
 * are bound parameters; field names only pick entries of CASE_FIELDS. Differences from Mongo, each
 * turned into a 400 rather than a silent empty page: a value of the wrong type (`{"enteredAt":
 * "5"}`), an embedded-document equality, an operator outside the subset.
 */
export function translateCaseFilter(target: CaseFilterCollection, filter: unknown): SQL {
  if (filter === undefined || filter === null) return sql`true`;
  return documentCondition(target, filter, "filter", 0, { conditions: 0 });
}
