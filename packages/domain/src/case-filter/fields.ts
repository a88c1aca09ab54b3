import { sql, type SQL } from "drizzle-orm";
import { participantFiles, participants, reports, surveyResponses } from "@studyflow/db";

/** The collections case-admin pages through: a study's survey responses, its participants and its reports. */
export type CaseFilterTarget = "responses" | "participants" | "reports";

/** The collections case-admin filters: those it pages through, and a study's participant files (one plain page). */
export type CaseFilterCollection = CaseFilterTarget | "files";

/** What a filter value of a field must be: CASE keeps strings, and times as whole Unix seconds. */
export type CaseValueType = "string" | "seconds";

/** A field stored in a column of its own: it can be compared and sorted on. */
export interface ScalarField {
  readonly shape: "scalar";
  readonly type: CaseValueType;
  /** The value as SQL; for most fields the column itself. */
  readonly expression: SQL;
  /** The column's name, for sorting and keyset reads (null: not sortable). */
  readonly column: string | null;
  /** The column may hold no value (SQL NULL), which Mongo sees as a missing field. */
  readonly nullable: boolean;
}

/** A map of string keys (`flags.X`): each entry is a field that may be missing. */
export interface MapField {
  readonly shape: "map";
  readonly type: CaseValueType;
  readonly expression: SQL;
  /**
   * The map's values are strings and a GIN index (jsonb_path_ops) serves containment on it: an
   * entry's equality is also written as containment, which the index answers.
   */
  readonly indexed?: true;
}

/**
 * An array of `{key, value, dtype}` objects (a report's `data`): `data.key` and `data.value` match
 * when some element has that value, as Mongo matches paths through arrays. Only equality
 * (`$eq`, `$ne`, `$in`, `$nin`, implicit) is offered on them.
 */
export interface ElementsField {
  readonly shape: "elements";
  readonly expression: SQL;
  readonly properties: readonly string[];
}

export type CaseField = ScalarField | MapField | ElementsField;

const scalar = (type: CaseValueType, expression: SQL, column: string | null, nullable = false): ScalarField => ({
  shape: "scalar",
  type,
  expression,
  column,
  nullable,
});

/**
 * The fields of CASE's documents (by their stored names, which case-admin's filters use) and where
 * studyflow keeps them. Anything not named here is refused with a 400 naming it.
 */
export const CASE_FIELDS: Record<CaseFilterCollection, Record<string, CaseField>> = {
  responses: {
    participantID: scalar("string", sql`${surveyResponses.participantId}`, "participant_id"),
    key: scalar("string", sql`${surveyResponses.key}`, "key"),
    versionID: scalar("string", sql`${surveyResponses.versionId}`, "version_id"),
    openedAt: scalar("seconds", sql`${surveyResponses.openedAt}`, "opened_at"),
    submittedAt: scalar("seconds", sql`${surveyResponses.submittedAt}`, "submitted_at"),
    arrivedAt: scalar("seconds", sql`${surveyResponses.arrivedAt}`, "arrived_at"),
    context: { shape: "map", type: "string", expression: sql`${surveyResponses.context}` },
  },
  participants: {
    participantID: scalar("string", sql`${participants.participantId}`, "participant_id"),
    studyStatus: scalar("string", sql`${participants.studyStatus}`, "study_status"),
    currentStudySession: scalar("string", sql`${participants.currentStudySession}`, "current_study_session"),
    enteredAt: scalar("seconds", sql`${participants.enteredAt}`, "entered_at"),
    modifiedAt: scalar("seconds", sql`${participants.modifiedAt}`, "modified_at"),
    flags: { shape: "map", type: "string", expression: sql`${participants.flags}` },
    // participants_linking_codes_idx: a participant is looked up by a linking code
    linkingCodes: { shape: "map", type: "string", expression: sql`${participants.linkingCodes}`, indexed: true },
    // CASE stores the participant's lastSubmissions under this (singular) name.
    lastSubmission: { shape: "map", type: "seconds", expression: sql`${participants.lastSubmissions}` },
  },
  reports: {
    key: scalar("string", sql`${reports.key}`, "key"),
    participantID: scalar("string", sql`${reports.participantId}`, "participant_id"),
    // CASE keeps "" for a report that no response produced.
    responseID: scalar("string", sql`coalesce(${reports.responseId}::text, '')`, null),
    timestamp: scalar("seconds", sql`${reports.timestamp}`, "timestamp"),
    data: { shape: "elements", expression: sql`${reports.data}`, properties: ["key", "value", "dtype"] },
  },
  // case-admin's file page filters by participantID; CASE's createdAt is a date, not seconds, so it is not offered
  files: {
    participantID: scalar("string", sql`${participantFiles.participantId}`, "participant_id"),
    status: scalar("string", sql`${participantFiles.status}`, "status"),
    fileType: scalar("string", sql`${participantFiles.fileType}`, "file_type"),
  },
};

/** The field a dotted path names, with the map key or element property after the dot. */
export interface ResolvedField {
  field: CaseField;
  /** `flags.X` → "X"; `data.key` → "key"; undefined for a scalar. */
  subKey?: string;
}

/** Resolves `path` on `target`, or returns null when CASE's documents have no such field for us. */
export function resolveCaseField(target: CaseFilterCollection, path: string): ResolvedField | null {
  const fields = CASE_FIELDS[target];
  const dot = path.indexOf(".");
  if (dot === -1) {
    const field = Object.hasOwn(fields, path) ? fields[path] : undefined;
    return field && field.shape === "scalar" ? { field } : null;
  }
  const head = path.slice(0, dot);
  const rest = path.slice(dot + 1);
  const field = Object.hasOwn(fields, head) ? fields[head] : undefined;
  if (!field || field.shape === "scalar" || rest === "" || rest.includes(".")) return null;
  if (field.shape === "elements" && !field.properties.includes(rest)) return null;
  return { field, subKey: rest };
}
