import { and, eq, or, sql } from "drizzle-orm";
import {
  confidentialIdMap,
  confidentialResponses,
  reports,
  studyCodeLists,
  studyCounters,
  studyVariables,
  surveyResponses,
  type Executor,
  type StoredReportData,
  type StudyVariableType,
} from "@studyflow/db";
import { caseStudyVariableValue, STUDY_VARIABLE_TYPES } from "../study-config/study-variables";
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  caseAccountUuid,
  canonicalJson,
  documentId,
  isObjectIdHex,
  toPlain,
  type CaseDocument,
  type Plain,
} from "./case-values";
import { absentConfidentialResponses, absentStudyCodes } from "./import-absent";
import {
  IGNORED,
  INSERTED,
  skipped,
  UNCHANGED,
  UPDATED,
  type BatchDocument,
  type CollectionImporter,
  type DocumentOutcome,
} from "./import-batch";
import type { ImportedStudies } from "./import-studies";
import { fromExcluded } from "./import-record";
import { bulkRowsImporter } from "./bulk-rows";
import { rawArrayJson } from "./bson-json";

/**
 * What a study has besides its setup and participants, as case-backend keeps it in the study
 * database (pkg/study/types, pkg/db/study): per study `<studyKey>_surveyResponses`, `_reports`
 * and `_confidentialResponses`; for the whole instance, with a studyKey field,
 * `confidential-id-map`, `studyCodeLists`, `studyCounters` and `studyVariables`. A CASE
 * document's ObjectId becomes the studyflow row's UUID (as an account's does), so a rerun finds
 * the row it wrote and a report still names the response it came from.
 */

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The row id of a document whose ObjectId is its identity in CASE, or undefined when it has none. */
/** What every document of a participant's collection names: its ObjectId, the participant, its key. */
interface ParticipantDocumentHead {
  objectId: string;
  /** The row's id, made from the ObjectId (the same document gives the same row on every run). */
  id: string;
  participantId: string;
  key: string;
}

/**
 * The head of a response, report or confidential response (`what` names it), or the skip saying
 * which part it lacks (`keyName`: how the report says the key it lacks).
 */
function participantDocumentHead(
  document: CaseDocument,
  what: string,
  keyName = "key",
): ParticipantDocumentHead | DocumentOutcome {
  const objectId = documentId(document);
  if (!isObjectIdHex(objectId)) return skipped(`the ${what} has no ObjectId _id`);
  const participantId = asString(document["participantID"]);
  const key = asString(document["key"]);
  if (participantId === "") return skipped(`the ${what} has no participantID`);
  if (key === "") return skipped(`the ${what} has no ${keyName}`);
  return { objectId, id: caseAccountUuid(objectId), participantId, key };
}

/** A map[string]string value: text, or the JSON of whatever else a document holds there. */
const textOf = (value: Plain): string =>
  typeof value === "string"
    ? value
    : value === null
      ? ""
      : typeof value === "object"
        ? JSON.stringify(value)
        : `${value}`;

const textMap = (value: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(asRecord(value)).map(([key, item]) => [key, textOf(toPlain(item))]));

/** A BSON date (Go's time.Time) as a Date; absent or unreadable as undefined. */
function bsonDate(value: unknown): Date | undefined {
  if (value instanceof Date && Number.isFinite(value.getTime())) return value;
  return undefined;
}

/**
 * One batch of documents that each become one row with an identity of their own: each document
 * is planned (a row, or an outcome when it cannot be imported), the rows studyflow has under those
 * identities are read in one query, and only the new and changed ones are written. A document whose
 * identity appears again later in the batch is reported: the later one is taken.
 */
interface KeyedRows<Row> {
  plan: (document: CaseDocument) => { id: string; row: Row } | DocumentOutcome;
  /** The rows studyflow has under these identities, by identity. */
  load: (tx: Executor, rows: readonly Row[]) => Promise<Map<string, Row>>;
  /** What makes two rows the same, as canonical JSON. */
  content: (row: Row) => unknown;
  save: (tx: Executor, rows: Row[], had: ReadonlyMap<string, Row>) => Promise<void>;
}

function keyedImporter<Row>(spec: KeyedRows<Row>): CollectionImporter {
  return {
    importBatch: async (tx, batch: readonly BatchDocument[], write) => {
      const outcomes: (DocumentOutcome | undefined)[] = batch.map(() => undefined);
      const planned = new Map<string, { at: number; row: Row }>();
      batch.forEach(({ document }, at) => {
        let plan: ReturnType<KeyedRows<Row>["plan"]>;
        try {
          plan = spec.plan(document);
        } catch (error) {
          outcomes[at] = skipped(errorText(error));
          return;
        }
        if ("kind" in plan) {
          outcomes[at] = plan;
          return;
        }
        const earlier = planned.get(plan.id);
        if (earlier) outcomes[earlier.at] = skipped(`${plan.id} appears again later`);
        planned.set(plan.id, { at, row: plan.row });
      });
      if (planned.size === 0) return outcomes.map((outcome) => outcome ?? IGNORED);
      const had = await spec.load(
        tx,
        [...planned.values()].map(({ row }) => row),
      );
      const writes: Row[] = [];
      for (const [id, { at, row }] of planned) {
        const before = had.get(id);
        if (before && canonicalJson(spec.content(before)) === canonicalJson(spec.content(row))) {
          outcomes[at] = UNCHANGED;
        } else {
          outcomes[at] = before ? UPDATED : INSERTED;
          writes.push(row);
        }
      }
      if (write && writes.length > 0) await spec.save(tx, writes, had);
      return outcomes.map((outcome) => outcome ?? IGNORED);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// per study: <studyKey>_surveyResponses, _reports, _confidentialResponses

/**
 * `<studyKey>_surveyResponses` (types.SurveyResponse): ids, survey key, version id, times,
 * context and every response item as the app sent it, into the table exports, the data explorer
 * and survey prefills read.
 */
export function surveyResponsesImporter(studyKey: string): CollectionImporter {
  return bulkRowsImporter({
    table: surveyResponses,
    plan: (document) => {
      const head = participantDocumentHead(document, "response", "survey key");
      if ("kind" in head) return head;
      const { id, participantId, key } = head;
      return {
        id,
        row: {
          studyKey,
          participantId,
          key,
          versionId: asString(document["versionID"]),
          openedAt: asNumber(document["openedAt"]),
          submittedAt: asNumber(document["submittedAt"]),
          arrivedAt: asNumber(document["arrivedAt"]),
          responses: rawArrayJson(document["responses"]),
          context: textMap(document["context"]),
        },
      };
    },
    compared: [
      "studyKey",
      "participantId",
      "key",
      "versionId",
      "openedAt",
      "submittedAt",
      "arrivedAt",
      "responses",
      "context",
    ],
    rawFields: { responses: true },
  });
}

/**
 * A report's event: case-backend does not keep which event's rules wrote a report, so an imported
 * report says it came with the import.
 */
export const IMPORTED_REPORT_EVENT = "IMPORTED";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The response a report came from, as the imported response's row id. */
function reportResponseId(value: unknown): string | null {
  const text = asString(value).trim();
  if (isObjectIdHex(text.toLowerCase())) return caseAccountUuid(text);
  return UUID.test(text) ? text.toLowerCase() : null;
}

function reportDataOf(value: unknown): StoredReportData[] {
  return asArray(value).map((item) => {
    const entry = asRecord(item);
    const dtype = asString(entry["dtype"]);
    return {
      key: asString(entry["key"]),
      value: textOf(toPlain(entry["value"])),
      ...(dtype === "" ? {} : { dtype }),
    };
  });
}

/**
 * `<studyKey>_reports` (types.Report): key, participant, the response it came from, time and data.
 * case-backend's modifiedAt has no place in studyflow's reports and is not carried.
 */
export function reportsImporter(studyKey: string): CollectionImporter {
  return bulkRowsImporter({
    table: reports,
    plan: (document) => {
      const head = participantDocumentHead(document, "report");
      if ("kind" in head) return head;
      const { id, participantId, key } = head;
      return {
        id,
        row: {
          studyKey,
          participantId,
          key,
          responseId: reportResponseId(document["responseID"]),
          eventType: IMPORTED_REPORT_EVENT,
          timestamp: asNumber(document["timestamp"]),
          data: reportDataOf(document["data"]),
        },
      };
    },
    compared: ["studyKey", "participantId", "key", "responseId", "timestamp", "data"],
  });
}

/**
 * `<studyKey>_confidentialResponses`: case-backend stores each confidential item as a
 * SurveyResponse whose participantID is the participant's confidential id, as studyflow does. It
 * keeps no time for them; the ObjectId's creation time gives their order.
 */
export function confidentialResponsesImporter(studyKey: string): CollectionImporter {
  const rows = bulkRowsImporter({
    table: confidentialResponses,
    plan: (document) => {
      // its participantID is the participant's confidential id
      const head = participantDocumentHead(document, "confidential response");
      if ("kind" in head) return head;
      const { objectId, id, participantId: confidentialId, key } = head;
      return {
        id,
        row: {
          studyKey,
          confidentialId,
          key,
          responses: rawArrayJson(document["responses"]),
          createdAt: new Date(parseInt(objectId.slice(0, 8), 16) * 1000),
        },
      };
    },
    compared: ["studyKey", "confidentialId", "key", "responses", "createdAt"],
    rawFields: { responses: true },
  });
  return { ...rows, absent: absentConfidentialResponses(studyKey) };
}

/** The per-study collections, by suffix of `<studyKey>_…`, in the order they are taken. */
export const studyDataImporters = (studyKey: string): [string, CollectionImporter][] => [
  ["surveyResponses", surveyResponsesImporter(studyKey)],
  ["reports", reportsImporter(studyKey)],
  ["confidentialResponses", confidentialResponsesImporter(studyKey)],
];

// ---------------------------------------------------------------------------------------------
// instance-wide, with a studyKey field: confidential-id-map, studyCodeLists, studyCounters, studyVariables

/** The outcome of a document of a study the import did not take, or undefined when it did. */
function outsideImport(imported: ImportedStudies, studyKey: string, what: string): DocumentOutcome | undefined {
  if (imported.keys.has(studyKey)) return undefined;
  if (studyKey === "") return skipped(`the ${what} names no study`);
  // a study another --study run takes, or one the dump does not have
  return imported.refused.has(studyKey) ? skipped(`study "${studyKey}" was not imported`) : IGNORED;
}

/** Rows of a table identified within a study by text columns, read for a batch in one query. */
const pairKey = (...parts: string[]) => parts.join("\u0000");

type IdMapRow = typeof confidentialIdMap.$inferSelect;

/** `confidential-id-map`: which profile a confidential id belongs to, so messages reach the account. */
export function confidentialIdMapImporter(imported: ImportedStudies): CollectionImporter {
  return keyedImporter<IdMapRow>({
    plan: (document) => {
      const studyKey = asString(document["studyKey"]);
      const outside = outsideImport(imported, studyKey, "entry");
      if (outside) return outside;
      const confidentialId = asString(document["confidentialID"]);
      const profileId = asString(document["profileID"]);
      if (confidentialId === "" || profileId === "") return skipped("the entry lacks confidentialID or profileID");
      return { id: pairKey(studyKey, confidentialId), row: { studyKey, confidentialId, profileId } };
    },
    load: async (tx, rows) => {
      const found = await tx
        .select()
        .from(confidentialIdMap)
        .where(
          or(
            ...rows.map((row) =>
              and(
                eq(confidentialIdMap.studyKey, row.studyKey),
                eq(confidentialIdMap.confidentialId, row.confidentialId),
              ),
            ),
          ),
        );
      return new Map(found.map((row) => [pairKey(row.studyKey, row.confidentialId), row]));
    },
    content: (row) => row.profileId,
    save: async (tx, rows, had) => {
      const replaced = rows.filter((row) => had.has(pairKey(row.studyKey, row.confidentialId)));
      if (replaced.length > 0) {
        await tx
          .delete(confidentialIdMap)
          .where(
            or(
              ...replaced.map((row) =>
                and(
                  eq(confidentialIdMap.studyKey, row.studyKey),
                  eq(confidentialIdMap.confidentialId, row.confidentialId),
                ),
              ),
            ),
          );
      }
      await tx.insert(confidentialIdMap).values(rows);
    },
  });
}

type CodeListRow = typeof studyCodeLists.$inferInsert & { addedAt: Date };

/** `studyCodeLists` (types.StudyCodeListEntry): every code of every list, with the time it was added. */
export function studyCodeListsImporter(imported: ImportedStudies): CollectionImporter {
  const rows = keyedImporter<CodeListRow>({
    plan: (document) => {
      const studyKey = asString(document["studyKey"]);
      const outside = outsideImport(imported, studyKey, "code");
      if (outside) return outside;
      const listKey = asString(document["listKey"]);
      const code = asString(document["code"]);
      if (listKey === "" || code === "") return skipped("the entry lacks listKey or code");
      const addedAt = bsonDate(document["addedAt"]) ?? new Date(0);
      return { id: pairKey(studyKey, listKey, code), row: { studyKey, listKey, code, addedAt } };
    },
    load: async (tx, rows) => {
      const found = await tx
        .select({
          studyKey: studyCodeLists.studyKey,
          listKey: studyCodeLists.listKey,
          code: studyCodeLists.code,
          addedAt: studyCodeLists.addedAt,
        })
        .from(studyCodeLists)
        .where(
          or(
            ...rows.map((row) =>
              and(
                eq(studyCodeLists.studyKey, row.studyKey),
                eq(studyCodeLists.listKey, row.listKey),
                eq(studyCodeLists.code, row.code),
              ),
            ),
          ),
        );
      return new Map(found.map((row) => [pairKey(row.studyKey, row.listKey, row.code), row]));
    },
    content: (row) => row.addedAt.getTime(),
    save: async (tx, rows) => {
      await tx
        .insert(studyCodeLists)
        .values(rows)
        .onConflictDoUpdate({
          target: [studyCodeLists.studyKey, studyCodeLists.listKey, studyCodeLists.code],
          set: { addedAt: sql`excluded.created_at` },
        });
    },
  });
  return { ...rows, absent: absentStudyCodes(imported) };
}

type CounterRow = typeof studyCounters.$inferSelect;

/** `studyCounters` (StudyCounter): each scope's current value, where the rules' counters go on counting. */
export function studyCountersImporter(imported: ImportedStudies): CollectionImporter {
  return keyedImporter<CounterRow>({
    plan: (document) => {
      const studyKey = asString(document["studyKey"]);
      const outside = outsideImport(imported, studyKey, "counter");
      if (outside) return outside;
      const scope = asString(document["scope"]);
      if (scope === "") return skipped("the counter has no scope");
      return { id: pairKey(studyKey, scope), row: { studyKey, scope, value: asNumber(document["value"]) } };
    },
    load: async (tx, rows) => {
      const found = await tx
        .select()
        .from(studyCounters)
        .where(
          or(...rows.map((row) => and(eq(studyCounters.studyKey, row.studyKey), eq(studyCounters.scope, row.scope)))),
        );
      return new Map(found.map((row) => [pairKey(row.studyKey, row.scope), row]));
    },
    content: (row) => row.value,
    save: async (tx, rows) => {
      await tx
        .insert(studyCounters)
        .values(rows)
        .onConflictDoUpdate({
          target: [studyCounters.studyKey, studyCounters.scope],
          set: { value: sql`excluded.value` },
        });
    },
  });
}

type VariableRow = typeof studyVariables.$inferSelect;

/** A variable's value when case-backend keeps none (null): its type's zero, which the rules need. */
const ZERO_VALUE: Record<StudyVariableType, string | number | boolean> = {
  string: "",
  int: 0,
  float: 0,
  boolean: false,
  date: 0,
};

/** A variable's value as studyflow stores it: a BSON date becomes Unix seconds, the rest is read as case-admin's. */
function variableValue(type: StudyVariableType, value: unknown): string | number | boolean {
  if (value === null || value === undefined) return ZERO_VALUE[type];
  const date = bsonDate(value);
  if (date) return Math.floor(date.getTime() / 1000);
  return caseStudyVariableValue(type, toPlain(value));
}

const isVariableType = (type: string): type is StudyVariableType =>
  (STUDY_VARIABLE_TYPES as readonly string[]).includes(type);

/** `studyVariables` (types.StudyVariables): type, value and case-admin's description of each variable. */
export function studyVariablesImporter(imported: ImportedStudies): CollectionImporter {
  return keyedImporter<VariableRow>({
    plan: (document) => {
      const studyKey = asString(document["studyKey"]);
      const outside = outsideImport(imported, studyKey, "variable");
      if (outside) return outside;
      const key = asString(document["key"]);
      const type = asString(document["type"]);
      if (key === "") return skipped("the variable has no key");
      if (!isVariableType(type)) return skipped(`type "${type}" is none of string, int, float, boolean, date`);
      const configs = toPlain(document["configs"]);
      const createdAt = bsonDate(document["createdAt"]) ?? new Date(0);
      return {
        id: pairKey(studyKey, key),
        row: {
          studyKey,
          key,
          type,
          value: variableValue(type, document["value"]),
          valueUpdatedAt: bsonDate(document["valueUpdatedAt"]) ?? createdAt,
          label: asString(document["label"]),
          description: asString(document["description"]),
          uiType: asString(document["uiType"]),
          uiPriority: asNumber(document["uiPriority"]),
          configs: configs !== null && typeof configs === "object" && !Array.isArray(configs) ? configs : null,
          createdAt,
          configUpdatedAt: bsonDate(document["configUpdatedAt"]) ?? createdAt,
        },
      };
    },
    load: async (tx, rows) => {
      const found = await tx
        .select()
        .from(studyVariables)
        .where(
          or(...rows.map((row) => and(eq(studyVariables.studyKey, row.studyKey), eq(studyVariables.key, row.key)))),
        );
      return new Map(found.map((row) => [pairKey(row.studyKey, row.key), row]));
    },
    content: (row) => [
      row.type,
      row.value,
      row.valueUpdatedAt.getTime(),
      row.label,
      row.description,
      row.uiType,
      row.uiPriority,
      row.configs,
      row.createdAt.getTime(),
      row.configUpdatedAt.getTime(),
    ],
    save: async (tx, rows) => {
      await tx
        .insert(studyVariables)
        .values(rows)
        .onConflictDoUpdate({
          target: [studyVariables.studyKey, studyVariables.key],
          set: fromExcluded(studyVariables, [
            "type",
            "value",
            "valueUpdatedAt",
            "label",
            "description",
            "uiType",
            "uiPriority",
            "configs",
            "createdAt",
            "configUpdatedAt",
          ]),
        });
    },
  });
}

/** The instance-wide collections of the study database that follow the imported studies, in order. */
export const sharedStudyDataImporters = (imported: ImportedStudies): [string, CollectionImporter][] => [
  ["confidential-id-map", confidentialIdMapImporter(imported)],
  ["studyCodeLists", studyCodeListsImporter(imported)],
  ["studyCounters", studyCountersImporter(imported)],
  ["studyVariables", studyVariablesImporter(imported)],
];
