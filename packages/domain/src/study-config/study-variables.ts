import { and, asc, eq } from "drizzle-orm";
import { studyVariables, type Executor, type StudyVariableType } from "@studyflow/db";
import { recordAudit } from "../admin/audit";
import { Invalid, NotFound } from "../errors";
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

export interface StoredStudyVariable {
  key: string;
  type: StudyVariableType;
  value: StudyVariableValue;
  valueUpdatedAt: Date;
}

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
};

const asStored = (row: { key: string; type: StudyVariableType; value: unknown; valueUpdatedAt: Date }) =>
  ({ ...row, value: row.value as StudyVariableValue }) satisfies StoredStudyVariable;

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
    const [updated] = await tx
      .update(studyVariables)
      .set({ type, value, valueUpdatedAt: new Date() })
      .where(variableOf(studyKey, key))
      .returning(columns);
    if (!updated) throw new Error("study variable update returned nothing");
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "variable.set",
      target: key,
      details: { type, value, previous: { type: existing.type, value: existing.value } },
    });
    return { variable: asStored(updated), created: false };
  });
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
