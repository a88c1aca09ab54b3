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

/** Receives the cells of one question's response. */
export interface CellSink {
  put(column: string, value: CellValue): void;
}

const TRUE = "TRUE";
const FALSE = "FALSE";
const OPEN_FIELD_SUFFIX = "open";
const ROOT = "rg";

const enum Kind {
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

function isClozeOption(slot: ResponseSlot, key: string): boolean {
  if (slot.options === null) return false;
  for (const o of slot.options) if (o.id === key && o.optionType === OptionType.cloze) return true;
  return false;
}

function isDropdownOption(slot: ResponseSlot, key: string): boolean {
  if (slot.options === null) return false;
  for (const o of slot.options) if (o.id === key && o.optionType === OptionType.dropdown) return true;
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

/** A question's cells for one response (`response` undefined when the item was not answered). */
export function questionCells(
  q: SurveyQuestion,
  response: ItemResponse | undefined,
  sep: string,
  sink: CellSink,
): void {
  const single = q.responses.length === 1;
  switch (kindOf(q.questionType)) {
    case Kind.SingleChoice:
      if (single) singleChoice(q.id, q.responses[0]!, response, sep, sink);
      else singleChoiceList(q.id, q.responses, response, sep, sink);
      break;
    case Kind.SingleChoiceGroup:
      singleChoiceList(q.id, q.responses, response, sep, sink);
      break;
    case Kind.MultipleChoice:
      for (const s of q.responses) {
        const prefix = single ? q.id + sep : q.id + sep + s.id + ".";
        multipleChoice(prefix, q.id + sep, s, response, sep, sink);
      }
      break;
    case Kind.Consent:
      if (single) sink.put(q.id, itemAtPath(response, ROOT + "." + q.responses[0]!.id) !== null ? TRUE : FALSE);
      else
        for (const s of q.responses)
          sink.put(q.id + sep + s.id, itemAtPath(response, ROOT + "." + s.id) !== null ? TRUE : FALSE);
      break;
    case Kind.InputValue:
      if (single) {
        const item = itemAtPath(response, ROOT + "." + q.responses[0]!.id);
        if (item !== null) sink.put(q.id, item.value);
      } else {
        for (const s of q.responses) {
          const item = itemAtPath(response, ROOT + "." + s.id);
          sink.put(q.id + sep + s.id, item === null ? "" : item.value);
        }
      }
      break;
    case Kind.ResponsiveTable:
      for (const s of q.responses) {
        const item = itemByShortKey(response, s.id);
        if (item !== null) sink.put(q.id + sep + s.id, item.value);
      }
      break;
    case Kind.Matrix:
      for (const s of q.responses) matrixCell(q.id + sep + s.id, s, response, sink);
      break;
    case Kind.Cloze:
      if (single) {
        const group = itemAtPath(response, ROOT + "." + q.responses[0]!.id);
        if (group !== null) clozeCells(q.id + sep, q.responses[0]!, group, sink);
      } else {
        for (const s of q.responses) {
          const group = itemByShortKey(response, s.id);
          if (group !== null) clozeCells(q.id + sep + s.id + ".", s, group, sink);
        }
      }
      break;
    case Kind.Unknown:
      for (const s of q.responses) {
        const item = itemAtPath(response, ROOT + "." + s.id);
        if (item !== null) sink.put(q.id + sep + s.id, item);
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
    sink.put(valueKey + "." + item.key, item.value === "" && only !== null ? only.key : item.value);
  }
}

function singleChoice(
  questionKey: string,
  slot: ResponseSlot,
  response: ItemResponse | undefined,
  sep: string,
  sink: CellSink,
): void {
  const group = itemAtPath(response, ROOT + "." + slot.id);
  if (group === null || group.items.length !== 1) return;
  const selection = group.items[0]!;
  sink.put(questionKey, selection.key);
  const valueKey = questionKey + sep + selection.key;
  if (isClozeOption(slot, selection.key)) clozeOptionCells(valueKey, selection, sink);
  else sink.put(valueKey, selection.value);
}

function singleChoiceList(
  questionKey: string,
  slots: readonly ResponseSlot[],
  response: ItemResponse | undefined,
  sep: string,
  sink: CellSink,
): void {
  for (const slot of slots) {
    const group = itemByShortKey(response, slot.id);
    if (group === null || group.items.length !== 1) continue;
    const selection = group.items[0]!;
    sink.put(questionKey + sep + slot.id, selection.key);
    const valueKey = questionKey + sep + slot.id + "." + selection.key;
    if (isClozeOption(slot, selection.key)) clozeOptionCells(valueKey, selection, sink);
    else sink.put(valueKey, selection.value);
  }
}

/**
 * One multiple-choice slot: every option FALSE (embedded cloze inputs ""), then each selected
 * option TRUE with its open text or its cloze inputs. CASE writes the "" of embedded cloze inputs
 * under `<question><sep>` even for a slot of a multi-slot question, where no such column exists and
 * the cell is dropped; kept so for parity.
 */
function multipleChoice(
  prefix: string,
  questionPrefix: string,
  slot: ResponseSlot,
  response: ItemResponse | undefined,
  sep: string,
  sink: CellSink,
): void {
  const group = itemAtPath(response, ROOT + "." + slot.id);
  if (group === null || group.items.length === 0) return;
  for (const o of slot.options ?? []) {
    sink.put(prefix + o.id, FALSE);
    if (isEmbeddedCloze(o.optionType)) sink.put(questionPrefix + o.id, "");
  }
  for (const item of group.items) {
    sink.put(prefix + item.key, TRUE);
    const valueKey = prefix + item.key;
    if (isClozeOption(slot, item.key)) clozeOptionCells(valueKey, item, sink);
    else sink.put(valueKey + sep + OPEN_FIELD_SUFFIX, item.value);
  }
}

function matrixCell(column: string, slot: ResponseSlot, response: ItemResponse | undefined, sink: CellSink): void {
  const group = itemAtPath(response, ROOT + "." + slot.id);
  if (group === null) return;
  if (slot.responseType === QuestionType.matrixRadioRow) {
    if (group.items.length === 1) sink.put(column, group.items[0]!.key);
  } else if (slot.responseType === QuestionType.matrixDropdown) {
    if (group.items.length === 1) {
      const selection = group.items[0]!;
      sink.put(column, selection.value !== "" ? selection.value : selection.key);
    }
  } else {
    sink.put(column, group.value);
  }
}

function clozeCells(prefix: string, slot: ResponseSlot, group: ResponseItem, sink: CellSink): void {
  for (const item of group.items) {
    if (isDropdownOption(slot, item.key)) {
      if (item.items.length === 1) sink.put(prefix + item.key, item.items[0]!.key);
    } else {
      sink.put(prefix + item.key, item.value);
    }
  }
}
