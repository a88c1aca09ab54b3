/**
 * Per question type: the columns a question contributes, and the cells a response fills, by
 * CASE's rules (its question-type handlers). A cell whose name is not a column of the export is
 * dropped by the caller, as CASE drops it: e.g. the `<question>-<option>` value of a plain radio
 * choice, or an option the definition does not know.
 */
import { itemAtPath, itemByShortKey, type ItemResponse, type ResponseItem } from "./response-items";

import { OptionType, QuestionType, type ResponseSlot, type SurveyQuestion } from "./survey-questions";

/** A response cell: text, or the raw response tree for slots of unknown type. */
export type CellValue = string | ResponseItem;

/**
 * Receives the cells of one question's response. A cell is named `prefix + suffix`, with `prefix`
 * one of the question's prepared strings: the sink resolves the pair without building the name
 * (hashing a freshly concatenated string per cell dominated the export's time).
 */
export interface CellSink {
  put(prefix: string, suffix: string, value: CellValue): void;
  /** A cell named by a string built from response keys (rare: inputs inside a cloze option). */
  putName(column: string, value: CellValue): void;
}

const TRUE = "TRUE";
const FALSE = "FALSE";
const OPEN_FIELD_SUFFIX = "open";
const ROOT = "rg";

export const enum Kind {
  SingleChoice,
  SingleChoiceGroup,
  MultipleChoice,
  Consent,
  InputValue,
  ResponsiveTable,
  Matrix,
  Cloze,
  Empty,
  Unknown,
  /** A type no handler takes (e.g. a lone matrix cell): no columns, no cells, as in CASE. */
  None,
}

function kindOf(questionType: string): Kind {
  switch (questionType) {
    case QuestionType.singleChoice:
    case QuestionType.dropdown:
    case QuestionType.likert:
    case QuestionType.likertGroup:
      return Kind.SingleChoice;
    case QuestionType.responsiveSingleChoiceArray:
    case QuestionType.responsiveBipolarLikertArray:
      return Kind.SingleChoiceGroup;
    case QuestionType.multipleChoice:
      return Kind.MultipleChoice;
    case QuestionType.consent:
      return Kind.Consent;
    case QuestionType.text:
    case QuestionType.date:
    case QuestionType.number:
    case QuestionType.slider:
    case QuestionType.eq5dSlider:
      return Kind.InputValue;
    case QuestionType.responsiveTable:
      return Kind.ResponsiveTable;
    case QuestionType.matrix:
      return Kind.Matrix;
    case QuestionType.cloze:
      return Kind.Cloze;
    case QuestionType.empty:
      return Kind.Empty;
    case QuestionType.unknown:
      return Kind.Unknown;
    default:
      return Kind.None;
  }
}

function isEmbeddedCloze(optionType: string): boolean {
  return (
    optionType === OptionType.embeddedClozeDate ||
    optionType === OptionType.embeddedClozeDropdown ||
    optionType === OptionType.embeddedClozeNumber ||
    optionType === OptionType.embeddedClozeText
  );
}

/** Options whose value (not only their selection) gets a column in a single-choice question. */
function hasSingleChoiceValueColumn(optionType: string): boolean {
  return optionType !== OptionType.radio && optionType !== OptionType.dropdownOption && optionType !== OptionType.cloze;
}

/** Options of a multiple-choice question that also get an `…<sep>open` column. */
function hasOpenColumn(optionType: string): boolean {
  return optionType !== OptionType.checkbox && optionType !== OptionType.cloze && !isEmbeddedCloze(optionType);
}

/** Whether the slot lists the option `key` as one of this type. */
function hasOption(slot: ResponseSlot, key: string, optionType: string): boolean {
  if (slot.options === null) return false;
  for (const o of slot.options) if (o.id === key && o.optionType === optionType) return true;
  return false;
}

/** The column names a question contributes (unsorted; the export sorts the union). */
export function questionColumns(q: SurveyQuestion, sep: string): string[] {
  const cols: string[] = [];
  const single = q.responses.length === 1;
  const kind = kindOf(q.questionType);
  switch (kind) {
    case Kind.SingleChoice:
    case Kind.SingleChoiceGroup:
      if (single && kind === Kind.SingleChoice) {
        cols.push(q.id);
        for (const o of q.responses[0]!.options ?? [])
          if (hasSingleChoiceValueColumn(o.optionType)) cols.push(q.id + sep + o.id);
        break;
      }
      // Several slots (or an array type) are laid out per slot.
      for (const s of q.responses) {
        cols.push(q.id + sep + s.id);
        for (const o of s.options ?? [])
          if (hasSingleChoiceValueColumn(o.optionType)) cols.push(q.id + sep + s.id + "." + o.id);
      }
      break;
    case Kind.MultipleChoice:
      for (const s of q.responses) {
        const prefix = single ? q.id + sep : q.id + sep + s.id + ".";
        for (const o of s.options ?? []) {
          cols.push(prefix + o.id);
          if (hasOpenColumn(o.optionType)) cols.push(prefix + o.id + sep + OPEN_FIELD_SUFFIX);
        }
      }
      break;
    case Kind.Consent:
    case Kind.InputValue:
      if (single) cols.push(q.id);
      else for (const s of q.responses) cols.push(q.id + sep + s.id);
      break;
    case Kind.ResponsiveTable:
    case Kind.Matrix:
    case Kind.Unknown:
      for (const s of q.responses) cols.push(q.id + sep + s.id);
      break;
    case Kind.Cloze:
      for (const s of q.responses) {
        const prefix = single ? q.id + sep : q.id + sep + s.id + ".";
        for (const o of s.options ?? []) {
          const t = o.optionType;
          if (t === OptionType.date || t === OptionType.number || t === OptionType.text || t === OptionType.dropdown)
            cols.push(prefix + o.id);
        }
      }
      break;
    case Kind.Empty:
    case Kind.None:
      break;
  }
  return cols;
}

/** A question with the names and paths its cells use, computed once per export. */
export interface PreparedQuestion {
  readonly question: SurveyQuestion;
  readonly kind: Kind;
  readonly single: boolean;
  /** `<question><sep>` */
  readonly questionPrefix: string;
  /** Per slot: `<question><sep><slot>` */
  readonly slotKeys: readonly string[];
  /** Per slot: `<question><sep><slot>.` */
  readonly slotPrefixes: readonly string[];
  /** Per slot: the path `rg.<slot>` split at its dots. */
  readonly slotPaths: readonly (readonly string[])[];
  /** `<sep>open` */
  readonly openSuffix: string;
}

export function prepareQuestion(question: SurveyQuestion, sep: string): PreparedQuestion {
  const id = question.id;
  return {
    question,
    kind: kindOf(question.questionType),
    single: question.responses.length === 1,
    questionPrefix: id + sep,
    slotKeys: question.responses.map((s) => id + sep + s.id),
    slotPrefixes: question.responses.map((s) => id + sep + s.id + "."),
    slotPaths: question.responses.map((s) => [ROOT, ...s.id.split(".")]),
    openSuffix: sep + OPEN_FIELD_SUFFIX,
  };
}

/** A question's cells for one response (`response` undefined when the item was not answered). */
export function questionCells(p: PreparedQuestion, response: ItemResponse | undefined, sink: CellSink): void {
  const q = p.question;
  const slots = q.responses;
  switch (p.kind) {
    case Kind.SingleChoice:
      if (p.single) singleChoice(p, response, sink);
      else singleChoiceList(p, response, sink);
      break;
    case Kind.SingleChoiceGroup:
      singleChoiceList(p, response, sink);
      break;
    case Kind.MultipleChoice:
      for (let i = 0; i < slots.length; i++) multipleChoice(p, i, response, sink);
      break;
    case Kind.Consent:
      for (let i = 0; i < slots.length; i++) {
        const answered = itemAtPath(response, p.slotPaths[i]!) !== null;
        sink.put(p.single ? q.id : p.slotKeys[i]!, "", answered ? TRUE : FALSE);
      }
      break;
    case Kind.InputValue:
      if (p.single) {
        const item = itemAtPath(response, p.slotPaths[0]!);
        if (item !== null) sink.put(q.id, "", item.value);
      } else {
        for (let i = 0; i < slots.length; i++) {
          const item = itemAtPath(response, p.slotPaths[i]!);
          sink.put(p.slotKeys[i]!, "", item === null ? "" : item.value);
        }
      }
      break;
    case Kind.ResponsiveTable:
      for (let i = 0; i < slots.length; i++) {
        const item = itemByShortKey(response, slots[i]!.id);
        if (item !== null) sink.put(p.slotKeys[i]!, "", item.value);
      }
      break;
    case Kind.Matrix:
      for (let i = 0; i < slots.length; i++) matrixCell(p, i, response, sink);
      break;
    case Kind.Cloze:
      for (let i = 0; i < slots.length; i++) {
        const group = p.single ? itemAtPath(response, p.slotPaths[0]!) : itemByShortKey(response, slots[i]!.id);
        if (group !== null) clozeCells(p.single ? p.questionPrefix : p.slotPrefixes[i]!, slots[i]!, group, sink);
      }
      break;
    case Kind.Unknown:
      for (let i = 0; i < slots.length; i++) {
        const item = itemAtPath(response, p.slotPaths[i]!);
        if (item !== null) sink.put(p.slotKeys[i]!, "", item);
      }
      break;
    case Kind.Empty:
    case Kind.None:
      break;
  }
}

/** The inputs inside a selected cloze option: a dropdown's selected key, an input's value. */
function clozeOptionCells(valueKey: string, selection: ResponseItem, sink: CellSink): void {
  for (const item of selection.items) {
    const only = item.items.length === 1 ? item.items[0]! : null;
    sink.putName(valueKey + "." + item.key, item.value === "" && only !== null ? only.key : item.value);
  }
}

function singleChoice(p: PreparedQuestion, response: ItemResponse | undefined, sink: CellSink): void {
  const slot = p.question.responses[0]!;
  const group = itemAtPath(response, p.slotPaths[0]!);
  if (group === null || group.items.length !== 1) return;
  const selection = group.items[0]!;
  sink.put(p.question.id, "", selection.key);
  if (hasOption(slot, selection.key, OptionType.cloze))
    clozeOptionCells(p.questionPrefix + selection.key, selection, sink);
  else sink.put(p.questionPrefix, selection.key, selection.value);
}

function singleChoiceList(p: PreparedQuestion, response: ItemResponse | undefined, sink: CellSink): void {
  const slots = p.question.responses;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const group = itemByShortKey(response, slot.id);
    if (group === null || group.items.length !== 1) continue;
    const selection = group.items[0]!;
    sink.put(p.slotKeys[i]!, "", selection.key);
    if (hasOption(slot, selection.key, OptionType.cloze))
      clozeOptionCells(p.slotPrefixes[i]! + selection.key, selection, sink);
    else sink.put(p.slotPrefixes[i]!, selection.key, selection.value);
  }
}

/**
 * One multiple-choice slot: every option FALSE (embedded cloze inputs ""), then each selected
 * option TRUE with its open text or its cloze inputs. CASE writes the "" of embedded cloze inputs
 * under `<question><sep>` even for a slot of a multi-slot question, where no such column exists and
 * the cell is dropped; kept so for parity.
 */
function multipleChoice(p: PreparedQuestion, i: number, response: ItemResponse | undefined, sink: CellSink): void {
  const slot = p.question.responses[i]!;
  const prefix = p.single ? p.questionPrefix : p.slotPrefixes[i]!;
  const group = itemAtPath(response, p.slotPaths[i]!);
  if (group === null || group.items.length === 0) return;
  for (const o of slot.options ?? []) {
    sink.put(prefix, o.id, FALSE);
    if (isEmbeddedCloze(o.optionType)) sink.put(p.questionPrefix, o.id, "");
  }
  for (const item of group.items) {
    sink.put(prefix, item.key, TRUE);
    if (hasOption(slot, item.key, OptionType.cloze)) clozeOptionCells(prefix + item.key, item, sink);
    else sink.put(prefix, item.key + p.openSuffix, item.value);
  }
}

function matrixCell(p: PreparedQuestion, i: number, response: ItemResponse | undefined, sink: CellSink): void {
  const slot = p.question.responses[i]!;
  const column = p.slotKeys[i]!;
  const group = itemAtPath(response, p.slotPaths[i]!);
  if (group === null) return;
  if (slot.responseType === QuestionType.matrixRadioRow) {
    if (group.items.length === 1) sink.put(column, "", group.items[0]!.key);
  } else if (slot.responseType === QuestionType.matrixDropdown) {
    if (group.items.length === 1) {
      const selection = group.items[0]!;
      sink.put(column, "", selection.value !== "" ? selection.value : selection.key);
    }
  } else {
    sink.put(column, "", group.value);
  }
}

function clozeCells(prefix: string, slot: ResponseSlot, group: ResponseItem, sink: CellSink): void {
  for (const item of group.items) {
    if (hasOption(slot, item.key, OptionType.dropdown)) {
      if (item.items.length === 1) sink.put(prefix, item.key, item.items[0]!.key);
    } else {
      sink.put(prefix, item.key, item.value);
    }
  }
}
