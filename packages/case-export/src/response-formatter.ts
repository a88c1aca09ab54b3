/**
 * Survey responses in CASE's export files: the wide and long CSV and the JSON document, cell for
 * cell as case-backend writes them for the same definitions and responses.
 *
 * Everything that depends only on the definitions (the header, each version's questions, where
 * each named cell lands) is planned once per formatter; a row then fills preallocated arrays.
 */
import { findSurveyVersion } from "./find-survey-version";
import { csvField } from "./go-csv";
import { compareGoStrings, goJsonNumber, goJsonString, stringOf } from "./go-json";
import {
  prepareQuestion,
  questionCells,
  questionColumns,
  type CellSink,
  type CellValue,
  type PreparedQuestion,
} from "./question-handlers";
import { csvFormatter, jsonArrayFormatter } from "./row-formatters";
import { keysKnown, readItemResponses, responseItemJson, type ItemResponse, type ResponseItem } from "./response-items";
import { readItemResponsesJson } from "./response-json";
import {
  previewVersions,
  shortenKeys,
  sortedUnique,
  type SurveyQuestion,
  type SurveyVersionPreview,
} from "./survey-questions";
import type { ExportResponse, ResponseExportOptions, ResponseFormatter, SurveyVersionInput } from "./types";

const FIXED_COLUMNS = ["ID", "participantID", "version", "opened", "submitted", "arrived"] as const;
const ACCOUNT_ID_COLUMN = "accountID";
const MAIN_PROFILE_COLUMN = "mainProfile";
/** "\n" as a byte, for the long format's byte writer. */
const NEWLINE = 0x0a;
const DEFAULT_CONTEXT_COLUMNS = ["language", "engineVersion", "session"] as const;

const enum Meta {
  Init,
  Displayed,
  Response,
  Position,
}
/** CASE tells a meta column's kind by the first of these its name contains, in this order. */
const META_SUFFIXES = ["metaInit", "metaDisplayed", "metaResponse", "metaPosition"] as const;

/** What a row holds for a column: text, a Unix time, a flag, meta timestamps, a raw response tree. */
type SlotValue = string | number | boolean | readonly number[] | ResponseItem;

interface MetaEntry {
  metaIndex: number;
  kind: Meta;
  question: number;
}

interface VersionPlan {
  preview: SurveyVersionPreview;
  questions: PreparedQuestion[];
  /** Per item key that is a question's: the first such question and the indexes of all of them. */
  questionsByKey: Map<string, { question: SurveyQuestion; indexes: number[] }>;
  /** Meta cells a response read with this version fills (the others stay ""). */
  meta: MetaEntry[];
}

interface ExportPlan {
  versions: SurveyVersionPreview[];
  plans: Map<SurveyVersionPreview, VersionPlan>;
  fixedColumns: string[];
  contextColumns: string[];
  responseColumns: string[];
  metaColumns: string[];
  responseIndex: Map<string, number>;
  /** Column → value slot; a name in several groups shares one slot, later groups overwriting. */
  fixedSlots: number[];
  contextSlots: number[];
  responseSlots: number[];
  metaSlots: number[];
  slotCount: number;
  /** JSON members in Go's key order: the encoded `"name":` and its slot. */
  jsonMembers: { prefix: string; slot: number }[];
}

function planExport(
  surveyKey: string,
  versions: readonly SurveyVersionInput[],
  options: ResponseExportOptions,
): ExportPlan {
  const sep = options.questionOptionSep;
  const previews = previewVersions(versions, "");
  if (options.shortKeys) shortenKeys(previews, surveyKey);

  const fixedColumns: string[] = [...FIXED_COLUMNS];
  if (options.accountColumns) fixedColumns.push(ACCOUNT_ID_COLUMN, MAIN_PROFILE_COLUMN);
  // The account columns come from the participant, never from the response context.
  const contextColumns = [...DEFAULT_CONTEXT_COLUMNS, ...options.extraContextColumns].filter(
    (c) => c !== ACCOUNT_ID_COLUMN && c !== MAIN_PROFILE_COLUMN,
  );

  const responseNames: string[] = [];
  const metaNames: string[] = [];
  const m = options.includeMeta;
  for (const v of previews) {
    for (const q of v.questions) {
      responseNames.push(...questionColumns(q, sep));
      if (m.initTimes) metaNames.push(q.id + sep + META_SUFFIXES[Meta.Init]);
      if (m.displayedTimes) metaNames.push(q.id + sep + META_SUFFIXES[Meta.Displayed]);
      if (m.responsedTimes) metaNames.push(q.id + sep + META_SUFFIXES[Meta.Response]);
      if (m.position) metaNames.push(q.id + sep + META_SUFFIXES[Meta.Position]);
    }
  }
  const responseColumns = sortedUnique(responseNames);
  const metaColumns = sortedUnique(metaNames);

  const slotOf = new Map<string, number>();
  const slotsFor = (names: readonly string[]): number[] =>
    names.map((name) => {
      let slot = slotOf.get(name);
      if (slot === undefined) slotOf.set(name, (slot = slotOf.size));
      return slot;
    });
  const fixedSlots = slotsFor(fixedColumns);
  const contextSlots = slotsFor(contextColumns);
  const responseSlots = slotsFor(responseColumns);
  const metaSlots = slotsFor(metaColumns);
  const jsonMembers = [...slotOf.keys()]
    .sort(compareGoStrings)
    .map((name) => ({ prefix: goJsonString(name) + ":", slot: slotOf.get(name)! }));

  const metaKindOf = (name: string): Meta | -1 => {
    for (let k = 0; k < META_SUFFIXES.length; k++) if (name.includes(META_SUFFIXES[k]!)) return k;
    return -1;
  };
  const plans = new Map<SurveyVersionPreview, VersionPlan>();
  for (const v of previews) {
    // Per meta kind, the question whose name it is (a later question with the same id wins, as in CASE's maps).
    const byKind = META_SUFFIXES.map(() => new Map<string, number>());
    v.questions.forEach((q, i) => {
      for (let k = 0; k < META_SUFFIXES.length; k++) byKind[k]!.set(q.id + sep + META_SUFFIXES[k]!, i);
    });
    const meta: MetaEntry[] = [];
    metaColumns.forEach((name, metaIndex) => {
      const kind = metaKindOf(name);
      if (kind === -1) return;
      const question = byKind[kind]!.get(name);
      if (question !== undefined) meta.push({ metaIndex, kind, question });
    });
    const questionsByKey = new Map<string, { question: SurveyQuestion; indexes: number[] }>();
    v.questions.forEach((q, i) => {
      const entry = questionsByKey.get(q.id);
      if (entry) entry.indexes.push(i);
      else questionsByKey.set(q.id, { question: q, indexes: [i] });
    });
    plans.set(v, {
      preview: v,
      questions: v.questions.map((q) => prepareQuestion(q, sep)),
      questionsByKey,
      meta,
    });
  }

  return {
    versions: previews,
    plans,
    fixedColumns,
    contextColumns,
    responseColumns,
    metaColumns,
    responseIndex: new Map(responseColumns.map((c, i) => [c, i])),
    fixedSlots,
    contextSlots,
    responseSlots,
    metaSlots,
    slotCount: slotOf.size,
    jsonMembers,
  };
}

/** CASE's text of a cell value in the CSV files. */
function cellText(v: SlotValue): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return v.join(",");
  return responseItemJson(v as ResponseItem);
}

function cellJson(v: SlotValue): string {
  if (typeof v === "string") return goJsonString(v);
  if (typeof v === "number") return goJsonNumber(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return "[" + v.join(",") + "]";
  return responseItemJson(v as ResponseItem);
}

/** Response cells keep their line breaks out of the CSV: CASE writes `<br />` for them. */
function withoutNewlines(s: string): string {
  return s.includes("\n") ? s.replaceAll("\r\n", "<br />").replaceAll("\n", "<br />") : s;
}

/** A context value (own keys only: a key like "constructor" must not read the prototype). */
function contextValue(record: Record<string, string>, key: string): string {
  return Object.prototype.hasOwnProperty.call(record, key) ? stringOf(record[key]) : "";
}

/** Fills one row's values; reused for every row of a formatter. */
class RowBuilder implements CellSink {
  readonly slots: SlotValue[];
  private readonly cells: (CellValue | undefined)[];
  private readonly owner: Int32Array;
  private readonly meta: SlotValue[];
  private question = -1;
  private readonly byPrefix = new Map<string, Map<string, number>>();
  /** Per question of the row's version, the item response it reads; reused for every row. */
  private readonly answered: (ItemResponse | undefined)[] = [];
  private readonly now: number;

  constructor(
    private readonly plan: ExportPlan,
    private readonly options: ResponseExportOptions,
    private readonly surveyKeyPrefix: string | null,
  ) {
    this.slots = new Array<SlotValue>(plan.slotCount).fill("");
    this.cells = new Array<CellValue | undefined>(plan.responseColumns.length);
    this.owner = new Int32Array(plan.responseColumns.length);
    this.meta = new Array<SlotValue>(plan.metaColumns.length).fill("");
    this.now = options.now;
  }

  /**
   * A cell of the current question. Cells that are no column are dropped; a cell an earlier
   * question already filled keeps the earlier value (CASE merges questions first-come).
   */
  put(prefix: string, suffix: string, value: CellValue): void {
    let bySuffix = this.byPrefix.get(prefix);
    if (bySuffix === undefined) {
      // Prefixes are the questions' prepared strings: a bounded set, each resolved once.
      bySuffix = new Map();
      this.plan.responseColumns.forEach((c, i) => {
        if (c.startsWith(prefix)) bySuffix!.set(c.slice(prefix.length), i);
      });
      this.byPrefix.set(prefix, bySuffix);
    }
    const i = bySuffix.get(suffix);
    if (i !== undefined) this.set(i, value);
  }

  putName(column: string, value: CellValue): void {
    const i = this.plan.responseIndex.get(column);
    if (i !== undefined) this.set(i, value);
  }

  private set(i: number, value: CellValue): void {
    const owner = this.owner[i]!;
    if (owner !== -1 && owner !== this.question) return;
    this.cells[i] = value;
    this.owner[i] = this.question;
  }

  /** Fills `slots` for one response; returns whether it did not match its definition. */
  fill(r: ExportResponse): boolean {
    const plan = this.plan;
    const slots = this.slots;
    const items = this.itemResponses(r.responses);
    const version = findSurveyVersion(r.versionId, r.arrivedAt, plan.versions, this.now);

    let versionLabel = r.versionId;
    if (version !== null && version.versionId !== r.versionId && version.versionId !== "") {
      versionLabel = r.versionId === "" ? version.versionId : r.versionId + " (" + version.versionId + ")";
    }
    const fixed = plan.fixedSlots;
    slots[fixed[0]!] = r.id;
    slots[fixed[1]!] = r.participantId;
    slots[fixed[2]!] = versionLabel;
    slots[fixed[3]!] = r.openedAt;
    slots[fixed[4]!] = r.submittedAt;
    slots[fixed[5]!] = r.arrivedAt;
    if (this.options.accountColumns) {
      slots[fixed[6]!] = r.account?.accountId ?? "";
      slots[fixed[7]!] = r.account?.mainProfile ?? "";
    }
    // A row stored without context reads as an empty map, as in CASE.
    const context: Record<string, string> = r.context ?? {};
    for (let i = 0; i < plan.contextColumns.length; i++) {
      slots[plan.contextSlots[i]!] = contextValue(context, plan.contextColumns[i]!);
    }

    this.cells.fill(undefined);
    this.owner.fill(-1);
    const meta = this.meta.fill("");
    // Without a version nothing of the response can be read: CASE fails the whole export there.
    let mismatch = version === null;
    if (version !== null) {
      const vplan = plan.plans.get(version)!;
      // Each question reads the first item response keyed with its id.
      const answered = this.answered;
      answered.length = version.questions.length;
      answered.fill(undefined);
      for (const it of items) {
        const key = this.shortKey(it.key);
        const entry = vplan.questionsByKey.get(key);
        if (entry !== undefined && answered[entry.indexes[0]!] === undefined)
          for (const qi of entry.indexes) answered[qi] = it;
        if (it.response !== null && !mismatch) {
          mismatch =
            entry === undefined ? !version.itemKeys.has(key) : !keysKnown(it.response, entry.question.knownKeys);
        }
      }
      const prepared = vplan.questions;
      for (let qi = 0; qi < prepared.length; qi++) {
        this.question = qi;
        questionCells(prepared[qi]!, answered[qi], this);
      }
      for (const e of vplan.meta) {
        const it = answered[e.question];
        switch (e.kind) {
          case Meta.Init:
            meta[e.metaIndex] = it?.rendered ?? [];
            break;
          case Meta.Displayed:
            meta[e.metaIndex] = it?.displayed ?? [];
            break;
          case Meta.Response:
            meta[e.metaIndex] = it?.responded ?? [];
            break;
          case Meta.Position:
            meta[e.metaIndex] = it?.position ?? 0;
            break;
        }
      }
    }
    for (let i = 0; i < plan.responseColumns.length; i++) slots[plan.responseSlots[i]!] = this.cells[i] ?? "";
    for (let i = 0; i < plan.metaColumns.length; i++) slots[plan.metaSlots[i]!] = meta[i]!;
    return mismatch;
  }

  /** A row's item responses; from JSON text, the items' meta is read only for meta columns. */
  private itemResponses(responses: unknown[] | string): ItemResponse[] {
    if (typeof responses !== "string") return readItemResponses(responses);
    const read = readItemResponsesJson(responses, this.plan.metaColumns.length > 0);
    if (read !== null) return read;
    // No array (or no JSON): parsed whole, as the driver parsed it before; a JSON null is no responses.
    const parsed = JSON.parse(responses) as unknown[] | null;
    return readItemResponses(parsed ?? []);
  }

  private shortKey(key: string): string {
    const prefix = this.surveyKeyPrefix;
    return prefix !== null && key.startsWith(prefix) ? key.slice(prefix.length) : key;
  }
}

export function createResponseFormatter(
  surveyKey: string,
  versions: readonly SurveyVersionInput[],
  options: ResponseExportOptions,
): ResponseFormatter {
  const plan = planExport(surveyKey, versions, options);
  const guard = options.guardFormulas === true && options.format !== "json";
  const row = new RowBuilder(plan, options, options.shortKeys && surveyKey !== "" ? surveyKey + "." : null);
  // The header (the study's own column names) and the ids are written as CASE writes them…
  const csv = (s: string): string => csvField(s);
  // …the cells a participant's client filled (answers, context, version, meta) guarded when asked.
  const entered = (s: string): string => csvField(s, guard);

  if (options.format === "json") {
    const members = plan.jsonMembers;
    return jsonArrayFormatter('{ "responses": [', (r, mismatch) => {
      if (row.fill(r)) mismatch();
      let obj = "{";
      for (let j = 0; j < members.length; j++) {
        const m = members[j]!;
        obj += (j === 0 ? "" : ",") + m.prefix + cellJson(row.slots[m.slot]!);
      }
      return obj + "}";
    });
  }

  const fixedAndContextSlots = [...plan.fixedSlots, ...plan.contextSlots];
  // ID, participantID and the account columns are the server's; the version id and the times come
  // with the submission (the times are numbers, which the guard leaves alone), the context too. A
  // context column named like a fixed one shares its slot and so holds the participant's value.
  const serverColumns = new Set<string>([FIXED_COLUMNS[0], FIXED_COLUMNS[1], ACCOUNT_ID_COLUMN, MAIN_PROFILE_COLUMN]);
  for (const c of plan.contextColumns) serverColumns.delete(c);
  const prefixWriters = [
    ...plan.fixedColumns.map((c) => (serverColumns.has(c) ? csv : entered)),
    ...plan.contextColumns.map(() => entered),
  ];
  const prefixOf = (): string => {
    let line = "";
    for (let j = 0; j < fixedAndContextSlots.length; j++)
      line += (j === 0 ? "" : ",") + prefixWriters[j]!(cellText(row.slots[fixedAndContextSlots[j]!]!));
    return line;
  };

  if (options.format === "long") {
    const header = [...plan.fixedColumns, ...plan.contextColumns, "responseSlot", "value"].map(csv).join(",") + "\n";
    const responseNames = plan.responseColumns.map((c) => "," + csv(c) + ",");
    const metaNames = plan.metaColumns.map((c) => "," + csv(c) + ",");
    // A line's value: a response slot's without line breaks, a meta slot's as it is.
    const responseValue = (j: number) => entered(withoutNewlines(cellText(row.slots[plan.responseSlots[j]!]!)));
    const metaValue = (j: number) => entered(cellText(row.slots[plan.metaSlots[j]!]!));
    const encoder = new TextEncoder();
    const responseNameBytes = responseNames.map((name) => encoder.encode(name));
    const metaNameBytes = metaNames.map((name) => encoder.encode(name));
    const lines = responseNames.length + metaNames.length;
    return csvFormatter(
      header,
      (r, mismatch) => {
        if (row.fill(r)) mismatch();
        const prefix = prefixOf();
        let text = "";
        for (let j = 0; j < responseNames.length; j++) text += prefix + responseNames[j]! + responseValue(j) + "\n";
        for (let j = 0; j < metaNames.length; j++) text += prefix + metaNames[j]! + metaValue(j) + "\n";
        return text;
      },
      // The same lines: the response's leading cells are encoded once and copied onto each line.
      (r, mismatch, out) => {
        if (row.fill(r)) mismatch();
        if (lines === 0) return;
        const prefixStart = out.length;
        out.text(prefixOf());
        const prefixEnd = out.length;
        for (let j = 0; j < lines; j++) {
          if (j > 0) out.again(prefixStart, prefixEnd);
          const response = j < responseNames.length;
          const k = response ? j : j - responseNames.length;
          out.bytes(response ? responseNameBytes[k]! : metaNameBytes[k]!);
          out.text(response ? responseValue(k) : metaValue(k));
          out.byte(NEWLINE);
        }
      },
    );
  }

  const header =
    [...plan.fixedColumns, ...plan.contextColumns, ...plan.responseColumns, ...plan.metaColumns].map(csv).join(",") +
    "\n";
  return csvFormatter(header, (r, mismatch) => {
    if (row.fill(r)) mismatch();
    let line = prefixOf();
    for (let j = 0; j < plan.responseSlots.length; j++)
      line += "," + entered(withoutNewlines(cellText(row.slots[plan.responseSlots[j]!]!)));
    for (let j = 0; j < plan.metaSlots.length; j++) line += "," + entered(cellText(row.slots[plan.metaSlots[j]!]!));
    return line + "\n";
  });
}

/** The columns of a wide export, in file order (for callers that show or validate them). */
export function responseExportColumns(
  surveyKey: string,
  versions: readonly SurveyVersionInput[],
  options: ResponseExportOptions,
): string[] {
  const plan = planExport(surveyKey, versions, options);
  return [...plan.fixedColumns, ...plan.contextColumns, ...plan.responseColumns, ...plan.metaColumns];
}
