import { and, asc, eq } from "drizzle-orm";
import { studyVariables, type Executor, type StudyVariableType } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { Conflict, Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";

/**
 * Study variables: typed values that rules read (getStudyVariableInt & co.) and update
 * (UPDATE_STUDY_VARIABLE_*). A value is stored as the engine reads it: a JSON string, number or
 * boolean matching the type, dates as Unix seconds.
 */

export const STUDY_VARIABLE_TYPES = [
  "string",
  "int",
  "float",
  "boolean",
  "date",
] as const satisfies readonly StudyVariableType[];

export type StudyVariableValue = string | number | boolean;

/** Longest string value: variables are settings and counters, not documents. */
export const MAX_STRING_VARIABLE_LENGTH = 10_000;

/** How case-admin describes a variable in its configurator; the rules never read it. */
export interface StudyVariableDescription {
  label: string;
  description: string;
  /** How case-admin edits the value. */
  uiType: string;
  /** The variable's place in case-admin's list. */
  uiPriority: number;
  /** case-admin's per-type settings (bounds, options), kept as given. */
  configs: Record<string, unknown> | null;
}

export interface StoredStudyVariable extends StudyVariableDescription {
  key: string;
  type: StudyVariableType;
  value: StudyVariableValue;
  valueUpdatedAt: Date;
  createdAt: Date;
  /** Last change of the description, apart from the value. */
  configUpdatedAt: Date;
}

/** Bounds of a description: a label and a help text, not documents. */
export const STUDY_VARIABLE_DESCRIPTION_LIMITS = {
  label: 500,
  description: 10_000,
  uiType: 100,
  /** Characters of the configs as JSON. */
  configs: 20_000,
} as const;

/** An ISO 8601 date (midnight UTC) or date-time with its offset; a date-time without one would depend on the server's zone. */
const ISO_DATE_OR_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** What each type accepts, as a message's tail. */
const EXPECTED: Record<StudyVariableType, string> = {
  string: `a string of at most ${MAX_STRING_VARIABLE_LENGTH} characters`,
  int: `a whole number (at most ${Number.MAX_SAFE_INTEGER} either way)`,
  float: "a finite number",
  boolean: "true or false",
  date: "Unix seconds (a whole number) or an ISO 8601 date or date-time with offset, e.g. 2026-11-01T09:00:00Z",
};

/** A refused value as a message shows it: JSON, cut short. */
function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 60)}…` : json;
}

/**
 * The stored form of `value` for `type` (dates become Unix seconds), or Invalid naming `field`:
 * the same checks the engine's UPDATE_STUDY_VARIABLE_* actions apply, minus their truncation
 * (a person typing 2.5 for an int means something else than 2).
 */
export function studyVariableValue(type: StudyVariableType, value: unknown, field = "value"): StudyVariableValue {
  const refuse = () =>
    new Invalid(
      `${field}: ${type === "int" ? "an" : "a"} ${type} variable takes ${EXPECTED[type]}, got ${shown(value)}`,
    );
  switch (type) {
    case "string":
      if (typeof value !== "string" || value.length > MAX_STRING_VARIABLE_LENGTH) throw refuse();
      return value;
    case "int":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) throw refuse();
      return value + 0;
    case "float":
      if (typeof value !== "number" || !Number.isFinite(value)) throw refuse();
      return value;
    case "boolean":
      if (typeof value !== "boolean") throw refuse();
      return value;
    case "date": {
      if (typeof value === "number" && Number.isSafeInteger(value)) return value + 0;
      if (typeof value !== "string" || !ISO_DATE_OR_INSTANT.test(value)) throw refuse();
      const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
      if (!Number.isFinite(ms)) throw refuse();
      return Math.floor(ms / 1000);
    }
  }
}

/** A value typed on a command line, read as `type` reads it ("42", "true", "2026-11-01"). */
export function parseStudyVariableText(type: StudyVariableType, text: string, field = "value"): StudyVariableValue {
  const trimmed = text.trim();
  switch (type) {
    case "string":
      return studyVariableValue(type, text, field);
    case "int":
      return studyVariableValue(type, /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : text, field);
    case "float":
      return studyVariableValue(
        type,
        /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : text,
        field,
      );
    case "boolean":
      return studyVariableValue(type, trimmed === "true" ? true : trimmed === "false" ? false : text, field);
    case "date":
      return studyVariableValue(type, /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : trimmed, field);
  }
}

const variableOf = (studyKey: string, key: string) =>
  and(eq(studyVariables.studyKey, studyKey), eq(studyVariables.key, key));

const columns = {
  key: studyVariables.key,
  type: studyVariables.type,
  value: studyVariables.value,
  valueUpdatedAt: studyVariables.valueUpdatedAt,
  label: studyVariables.label,
  description: studyVariables.description,
  uiType: studyVariables.uiType,
  uiPriority: studyVariables.uiPriority,
  configs: studyVariables.configs,
  createdAt: studyVariables.createdAt,
  configUpdatedAt: studyVariables.configUpdatedAt,
};

type VariableRow = Omit<StoredStudyVariable, "value" | "configs"> & { value: unknown; configs: unknown };

const asStored = (row: VariableRow) =>
  ({
    ...row,
    value: row.value as StudyVariableValue,
    configs: (row.configs ?? null) as Record<string, unknown> | null,
  }) satisfies StoredStudyVariable;

export async function listStudyVariables(db: Executor, studyKey: string): Promise<StoredStudyVariable[]> {
  await getStudy(db, studyKey);
  const rows = await db
    .select(columns)
    .from(studyVariables)
    .where(eq(studyVariables.studyKey, studyKey))
    .orderBy(asc(studyVariables.key));
  return rows.map(asStored);
}

export async function readStudyVariable(db: Executor, studyKey: string, key: string): Promise<StoredStudyVariable> {
  await getStudy(db, studyKey);
  const [row] = await db.select(columns).from(studyVariables).where(variableOf(studyKey, key)).limit(1);
  if (!row) throw new NotFound(`study variable "${key}" not found in study "${studyKey}"`);
  return asStored(row);
}

export interface StudyVariableInput {
  /** Needed to define a variable; given for an existing one, it may change its type. */
  type?: StudyVariableType;
  /** Checked against the type; always needed, so a type never changes without a value of it. */
  value: unknown;
}

/**
 * Defines a variable or sets its value (and type), recording `variable.define` or `variable.set`
 * with the value before and after, in one transaction. Rules that read the variable with another
 * type fail from then on, and are recorded as rule failures.
 */
export async function setStudyVariable(
  db: Executor,
  studyKey: string,
  key: string,
  input: StudyVariableInput,
  actor: string,
  ctx: ClockContext,
): Promise<{ variable: StoredStudyVariable; created: boolean }> {
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const lockExisting = async () =>
      (await tx.select(columns).from(studyVariables).where(variableOf(studyKey, key)).for("update").limit(1))[0];
    let existing = await lockExisting();
    const type = input.type ?? existing?.type;
    if (type === undefined) {
      throw new Invalid(`type: study variable "${key}" does not exist yet; give its type to define it`);
    }
    const value = studyVariableValue(type, input.value);
    if (!existing) {
      const [created] = await tx
        .insert(studyVariables)
        .values({ studyKey, key, type, value })
        .onConflictDoNothing()
        .returning(columns);
      if (created) {
        await recordAudit(tx, { studyKey, actor, action: "variable.define", target: key, details: { type, value } });
        return { variable: asStored(created), created: true };
      }
      // defined by a concurrent request since the look-up: set it as an existing one
      existing = await lockExisting();
      if (!existing) throw new Error(`study variable "${key}" vanished while it was being defined`);
    }
    return { variable: await writeVariableValue(tx, studyKey, existing, { type, value }, actor, ctx), created: false };
  });
}

/**
 * Writes a checked value (and type) over a variable locked in `tx`, recording `variable.set` with
 * the value before and after.
 */
async function writeVariableValue(
  tx: Executor,
  studyKey: string,
  existing: Pick<VariableRow, "key" | "type" | "value">,
  next: { type: StudyVariableType; value: StudyVariableValue },
  actor: string,
  ctx: ClockContext,
): Promise<StoredStudyVariable> {
  const [updated] = await tx
    .update(studyVariables)
    .set({ ...next, valueUpdatedAt: new Date(ctx.clock()) })
    .where(variableOf(studyKey, existing.key))
    .returning(columns);
  if (!updated) throw new Error("study variable update returned nothing");
  await recordAudit(tx, {
    studyKey,
    actor,
    action: "variable.set",
    target: existing.key,
    details: { ...next, previous: { type: existing.type, value: existing.value } },
  });
  return asStored(updated);
}

/** Deletes a variable, recording `variable.delete` with its last type and value; NotFound if absent. */
export async function deleteStudyVariable(db: Executor, studyKey: string, key: string, actor: string): Promise<void> {
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [removed] = await tx.delete(studyVariables).where(variableOf(studyKey, key)).returning(columns);
    if (!removed) throw new NotFound(`study variable "${key}" not found in study "${studyKey}"`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "variable.delete",
      target: key,
      details: { type: removed.type, value: removed.value },
    });
  });
}

/** Go's strconv.ParseBool spellings. */
const GO_BOOLEANS: Record<string, boolean> = {
  "1": true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  "0": false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

const DECIMAL_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** case-backend's reading of Unix time: from 10^12 on, milliseconds; below, seconds. */
const unixSeconds = (n: number) => Math.floor(n >= 1_000_000_000_000 ? n / 1000 : n);

/**
 * The stored form of a value case-admin sends for `type`, read as case-backend reads it: int,
 * float and boolean also as strings ("42", "0.5", "true"/"1"), a date as an RFC 3339 string (or
 * an ISO 8601 date), Unix seconds or milliseconds, as a number or a numeric string; then checked
 * as studyVariableValue checks it (an int a whole number, a float finite, strings bounded), so the
 * rules read the same values whoever set them. Invalid names `field`.
 */
export function caseStudyVariableValue(type: StudyVariableType, value: unknown, field = "value"): StudyVariableValue {
  if (value === null || value === undefined) throw new Invalid(`${field}: required`);
  switch (type) {
    case "string":
      return studyVariableValue(type, value, field);
    case "int":
    case "float": {
      const numeric = typeof value === "string" && DECIMAL_NUMBER.test(value) ? Number(value) : value;
      return studyVariableValue(type, numeric, field);
    }
    case "boolean": {
      const parsed = typeof value === "string" ? (GO_BOOLEANS[value] ?? value) : value;
      return studyVariableValue(type, parsed, field);
    }
    case "date": {
      if (typeof value === "number" && Number.isFinite(value))
        return studyVariableValue(type, unixSeconds(value), field);
      if (typeof value === "string" && /^[+-]?\d{1,16}$/.test(value)) {
        return studyVariableValue(type, unixSeconds(Number(value)), field);
      }
      return studyVariableValue(type, value, field);
    }
  }
}

/** The value of a variable defined without one: its type's zero (case-backend keeps none; the rules need one). */
const ZERO_VALUE: Record<StudyVariableType, StudyVariableValue> = {
  string: "",
  int: 0,
  float: 0,
  boolean: false,
  date: 0,
};

/** A description as given, checked against STUDY_VARIABLE_DESCRIPTION_LIMITS; absent parts are empty. */
function checkedDescription(given: Partial<StudyVariableDescription>, prefix: string): StudyVariableDescription {
  const text = (name: "label" | "description" | "uiType") => {
    const value = given[name] ?? "";
    const max = STUDY_VARIABLE_DESCRIPTION_LIMITS[name];
    if (value.length > max) throw new Invalid(`${prefix}.${name}: is longer than ${max} characters`);
    return value;
  };
  const configs = given.configs ?? null;
  if (configs !== null && JSON.stringify(configs).length > STUDY_VARIABLE_DESCRIPTION_LIMITS.configs) {
    throw new Invalid(
      `${prefix}.configs: is longer than ${STUDY_VARIABLE_DESCRIPTION_LIMITS.configs} characters as JSON`,
    );
  }
  return {
    label: text("label"),
    description: text("description"),
    uiType: text("uiType"),
    uiPriority: given.uiPriority ?? 0,
    configs,
  };
}

export interface StudyVariableDefinition extends Partial<StudyVariableDescription> {
  key: string;
  type: StudyVariableType;
  /** Read as caseStudyVariableValue reads it; absent or null: the type's zero. */
  value?: unknown;
}

/**
 * Defines a variable as case-admin does (its key, type, description and perhaps a value),
 * recording `variable.define`; Conflict if the study has a variable of that key.
 */
export async function createStudyVariable(
  db: Executor,
  studyKey: string,
  definition: StudyVariableDefinition,
  actor: string,
): Promise<StoredStudyVariable> {
  const { key, type } = definition;
  const value =
    definition.value === undefined || definition.value === null
      ? ZERO_VALUE[type]
      : caseStudyVariableValue(type, definition.value, "variableDef.value");
  const description = checkedDescription(definition, "variableDef");
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [created] = await tx
      .insert(studyVariables)
      .values({ studyKey, key, type, value, ...description })
      .onConflictDoNothing()
      .returning(columns);
    if (!created) throw new Conflict(`study variable "${key}" already exists in study "${studyKey}"`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "variable.define",
      target: key,
      details: { type, value },
    });
    return asStored(created);
  });
}

/**
 * Replaces a variable's description (label, description, uiType, uiPriority, configs; absent ones
 * become empty, as case-backend sets them), recording `variable.describe`; NotFound if absent.
 * Its key, type and value stay.
 */
export async function updateStudyVariableDescription(
  db: Executor,
  studyKey: string,
  key: string,
  given: Partial<StudyVariableDescription>,
  actor: string,
  ctx: ClockContext,
): Promise<StoredStudyVariable> {
  const description = checkedDescription(given, "variableDef");
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [updated] = await tx
      .update(studyVariables)
      .set({ ...description, configUpdatedAt: new Date(ctx.clock()) })
      .where(variableOf(studyKey, key))
      .returning(columns);
    if (!updated) throw new NotFound(`study variable "${key}" not found in study "${studyKey}"`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "variable.describe",
      target: key,
      details: { label: description.label, uiType: description.uiType, uiPriority: description.uiPriority },
    });
    return asStored(updated);
  });
}

/**
 * Sets a variable's value as case-admin does, read as caseStudyVariableValue reads it for the
 * variable's own type (a `type` given must be that type: the value route never changes it),
 * recording `variable.set` with the value before; NotFound if absent.
 */
export async function updateStudyVariableValue(
  db: Executor,
  studyKey: string,
  key: string,
  given: { value?: unknown; type?: StudyVariableType },
  actor: string,
  ctx: ClockContext,
): Promise<StoredStudyVariable> {
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const [existing] = await tx.select(columns).from(studyVariables).where(variableOf(studyKey, key)).for("update");
    if (!existing) throw new NotFound(`study variable "${key}" not found in study "${studyKey}"`);
    if (given.type !== undefined && given.type !== existing.type) {
      const article = existing.type === "int" ? "an" : "a";
      throw new Invalid(
        `variable.type: study variable "${key}" is ${article} ${existing.type} variable, not ${given.type}`,
      );
    }
    const value = caseStudyVariableValue(existing.type, given.value, "variable.value");
    return writeVariableValue(tx, studyKey, existing, { type: existing.type, value }, actor, ctx);
  });
}
