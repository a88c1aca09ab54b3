import type { z } from "zod";

/** The parts of zod's internal definition the walk below reads (zod 4's `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Wrappers that hold one schema and change nothing about the keys a value may carry. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/** The schema under optional/default/lazy/pipe wrappers; a bounded walk, so a self-referring lazy cannot loop. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 32; i++) {
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else if (def.type === "lazy" && def.getter) current = def.getter();
    else return current;
  }
  return current;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Renames the keys of `value` to the schema's keys as Go's encoding/json matches JSON keys to a
 * struct's fields: an exact match first, otherwise one that differs in letter case only
 * (`InstanceID`, `instanceId` and `instanceID` all fill `instanceId`); when several keys land on one
 * field, the last in the body wins, as in Go. Nested objects, arrays and records are walked with
 * their own schemas; keys the schema does not know are left as they are for it to judge.
 */
export function matchKeysToSchema(value: unknown, schema: z.ZodType, depth = 0): unknown {
  // the input boundary bounds a body's depth; this bound only keeps a recursive schema finite
  if (depth > 64) return value;
  const inner = unwrap(schema);
  const def = defOf(inner);
  switch (def.type) {
    case "object": {
      if (!isRecord(value) || !def.shape) return value;
      const shape = def.shape;
      const byLowerCase = new Map<string, string>();
      for (const key of Object.keys(shape)) {
        const lower = key.toLowerCase();
        // two schema keys equal but for case: neither is matched loosely, only exactly
        byLowerCase.set(lower, byLowerCase.has(lower) ? "" : key);
      }
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const target = Object.hasOwn(shape, key) ? key : byLowerCase.get(key.toLowerCase()) || key;
        const fieldSchema = Object.hasOwn(shape, target) ? shape[target] : undefined;
        // a later key landing on the same field overwrites the earlier one, as Go's decoder does
        result[target] = fieldSchema ? matchKeysToSchema(item, fieldSchema, depth + 1) : item;
      }
      return result;
    }
    case "array":
      return Array.isArray(value) && def.element
        ? value.map((item) => matchKeysToSchema(item, def.element!, depth + 1))
        : value;
    case "record": {
      if (!isRecord(value) || !def.valueType) return value;
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) result[key] = matchKeysToSchema(item, def.valueType, depth + 1);
      return result;
    }
    case "intersection":
      return def.left && def.right
        ? matchKeysToSchema(matchKeysToSchema(value, def.left, depth + 1), def.right, depth + 1)
        : value;
    case "union": {
      // the first object member's keys; unions of differently keyed objects are rare in CASE bodies
      const member = def.options?.find((option) => defOf(unwrap(option)).type === "object");
      return member ? matchKeysToSchema(value, member, depth + 1) : value;
    }
    default:
      return value;
  }
}
