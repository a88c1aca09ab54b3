/**
 * The questions, response slots and options of a survey definition, as CASE's exporter sees them
 * (its "survey version preview"): the column layout of the response exports and the content of
 * the codebook both come from here.
 */
import { compareGoStrings, int64Of } from "./go-json";
import type { SurveyVersionInput } from "./types";

/** Question types, named as CASE names them in the codebook. */
export const QuestionType = {
  consent: "consent",
  singleChoice: "single_choice",
  multipleChoice: "multiple_choice",
  text: "text",
  number: "number",
  date: "date",
  dropdown: "dropdown",
  likert: "likert",
  likertGroup: "likert_group",
  eq5dSlider: "eq5d_slider",
  slider: "slider",
  responsiveTable: "responsive_table",
  matrix: "matrix",
  matrixRadioRow: "matrix_radio_row",
  matrixDropdown: "matrix_dropdown",
  matrixInput: "matrix_input",
  matrixNumberInput: "matrix_number_input",
  matrixCheckbox: "matrix_checkbox",
  responsiveSingleChoiceArray: "responsive_single_choice_array",
  responsiveBipolarLikertArray: "responsive_bipolar_likert_array",
  cloze: "cloze",
  unknown: "unknown",
  empty: "empty",
} as const;

/** Option types, named as CASE names them in the codebook. */
export const OptionType = {
  dropdownOption: "option",
  radio: "radio",
  checkbox: "checkbox",
  text: "text",
  date: "date",
  number: "number",
  cloze: "cloze",
  dropdown: "dropdown",
  embeddedClozeText: "embedded_cloze_text",
  embeddedClozeDate: "embedded_cloze_date",
  embeddedClozeNumber: "embedded_cloze_number",
  embeddedClozeDropdown: "embedded_cloze_dropdown",
} as const;

export interface ResponseOption {
  id: string;
  optionType: string;
  label: string;
}

export interface ResponseSlot {
  id: string;
  responseType: string;
  label: string;
  /** null where CASE leaves the list unset (it writes `"options": null` in the codebook). */
  options: ResponseOption[] | null;
}

export interface SurveyQuestion {
  id: string;
  title: string;
  questionType: string;
  responses: ResponseSlot[];
  /**
   * Every component key under the question's response group (plus the keys the survey engine
   * derives from them): a response item keyed otherwise is a slot this definition does not know.
   * Not part of CASE's preview; used only to count mismatches.
   */
  knownKeys: ReadonlySet<string>;
}

export interface SurveyVersionPreview {
  versionId: string;
  published: number;
  unpublished: number;
  questions: SurveyQuestion[];
  /** Every item key of the definition (groups, display and confidential items included). */
  itemKeys: ReadonlySet<string>;
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function records(v: unknown): Json[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

function text(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** The root survey item of an uploaded definition (`surveyDefinition`, or the item itself). */
export function rootItemOf(definition: Readonly<Json>): Json | null {
  const root = definition["surveyDefinition"];
  if (isRecord(root)) return root;
  if (typeof definition["key"] === "string" && Array.isArray(definition["items"])) return definition;
  return null;
}

/**
 * Every stored version as CASE's preview, newest publication first as CASE reads them from its
 * database (the order matters for the codebook, ties in version lookup and unnamed versions).
 */
export function previewVersions(versions: readonly SurveyVersionInput[], language: string): SurveyVersionPreview[] {
  return versions
    .map((v, i) => ({ v, i }))
    .sort((a, b) => b.v.publishedAt - a.v.publishedAt || a.i - b.i)
    .map(({ v }) => previewVersion(v, language));
}

function previewVersion(version: SurveyVersionInput, language: string): SurveyVersionPreview {
  const root = rootItemOf(version.definition);
  const itemKeys = new Set<string>();
  const questions: SurveyQuestion[] = [];
  if (root !== null) {
    collectItemKeys(root, itemKeys);
    extractQuestions(root, language, questions);
  }
  return {
    versionId: version.versionId,
    published: int64Of(version.publishedAt),
    unpublished: version.unpublishedAt === null ? 0 : int64Of(version.unpublishedAt),
    questions,
    itemKeys,
  };
}

function collectItemKeys(item: Json, into: Set<string>): void {
  into.add(text(item["key"]));
  for (const child of records(item["items"])) collectItemKeys(child, into);
}

function extractQuestions(root: Json, language: string, into: SurveyQuestion[]): void {
  for (const item of records(root["items"])) {
    const type = text(item["type"]);
    if (type === "pageBreak" || type === "surveyEnd") continue;
    // Confidential items are exported apart (confidential responses), never in the response files.
    if (text(item["confidentialMode"]) !== "") continue;
    if (records(item["items"]).length > 0) {
      extractQuestions(item, language, into);
      continue;
    }
    const rg = componentWithRole(item, "responseGroup");
    if (rg === null) continue;
    const responses: ResponseSlot[] = [];
    for (const comp of records(rg["items"])) responses.push(...responseSlots(comp, language));
    const titleComp = language === "" ? null : componentWithRole(item, "title");
    into.push({
      id: text(item["key"]),
      title: titleComp === null ? "" : previewText(titleComp, language),
      questionType: questionTypeOf(responses),
      responses,
      knownKeys: knownKeysOf(rg),
    });
  }
}

function componentWithRole(item: Json, role: string): Json | null {
  const components = item["components"];
  if (!isRecord(components)) return null;
  for (const c of records(components["items"])) if (c["role"] === role) return c;
  return null;
}

function questionTypeOf(responses: readonly ResponseSlot[]): string {
  const first = responses[0];
  if (first === undefined) return QuestionType.empty;
  if (responses.length === 1) return first.responseType;
  // Several slots: any matrix cell makes a matrix; otherwise all slots must agree.
  if (first.responseType.includes(QuestionType.matrix)) return QuestionType.matrix;
  for (const r of responses) if (r.responseType !== first.responseType) return QuestionType.unknown;
  return first.responseType;
}

/** Keys a response to this response group may carry; see {@link SurveyQuestion.knownKeys}. */
function knownKeysOf(rg: Json): Set<string> {
  const keys = new Set<string>();
  const walk = (c: Json): void => {
    keys.add(text(c["key"]));
    const role = text(c["role"]);
    if (role === "responsiveMatrix") {
      // Its answers are keyed `<row>-<column>`.
      const rows = records(c["items"]).find((x) => x["role"] === "rows");
      const cols = records(c["items"]).find((x) => x["role"] === "columns");
      for (const row of records(rows?.["items"]))
        for (const col of records(cols?.["items"])) keys.add(text(row["key"]) + "-" + text(col["key"]));
    } else if (role === "address") {
      for (const k of ["street", "street2", "city", "postalCode", "country"]) keys.add(k);
    }
    for (const child of records(c["items"])) walk(child);
  };
  walk(rg);
  return keys;
}

// ----- texts -----------------------------------------------------------------------------------

/**
 * A component's text in `language`: its own translation, or, when it has children, the children's
 * translations joined. Expression and number parts read `<exp>` and `<num>`. "" when missing or
 * when labels were not asked for ("" or "ignored").
 */
export function previewText(comp: Json | null | undefined, language: string): string {
  if (language === "ignored" || language === "") return "";
  if (comp === null || comp === undefined) return "";
  const children = Array.isArray(comp["items"]) ? comp["items"] : [];
  if (children.length > 0) {
    let joined = "";
    for (const child of children) if (isRecord(child)) joined += translation(child["content"], language);
    return joined;
  }
  return translation(comp["content"], language);
}

function translation(content: unknown, language: string): string {
  for (const t of records(content)) {
    if (t["code"] !== language) continue;
    let merged = "";
    for (const p of records(t["parts"])) {
      const dtype = p["dtype"];
      merged += dtype === "exp" ? "<exp>" : dtype === "num" ? "<num>" : text(p["str"]);
    }
    return merged;
  }
  return "";
}

// ----- response slots per component role --------------------------------------------------------

/** Text, date and number inputs have the same option type wherever they stand (choice or cloze). */
const INPUT_OPTION_TYPES = new Map<string, string>([
  ["input", OptionType.text],
  ["dateInput", OptionType.date],
  ["timeInput", OptionType.number],
  ["numberInput", OptionType.number],
]);

function choiceOptionType(role: string, selectable: string): string {
  if (role === "option" || role === "formattedOption") return selectable;
  if (role === "cloze") return OptionType.cloze;
  return INPUT_OPTION_TYPES.get(role) ?? "";
}

function clozeOptionType(role: string): string {
  if (role === "dropDownGroup") return OptionType.dropdown;
  return INPUT_OPTION_TYPES.get(role) ?? "";
}

/** An input inside a choice's cloze option: the cloze type, marked as embedded. */
const EMBEDDED_OPTION_TYPES = new Map<string, string>([
  [OptionType.text, OptionType.embeddedClozeText],
  [OptionType.date, OptionType.embeddedClozeDate],
  [OptionType.number, OptionType.embeddedClozeNumber],
  [OptionType.dropdown, OptionType.embeddedClozeDropdown],
]);

function embeddedClozeOptionType(role: string): string {
  return EMBEDDED_OPTION_TYPES.get(clozeOptionType(role)) ?? "";
}

function choiceOptions(comp: Json, selectable: string, language: string): ResponseOption[] | null {
  let options: ResponseOption[] | null = null;
  for (const o of records(comp["items"])) {
    const option = {
      id: text(o["key"]),
      optionType: choiceOptionType(text(o["role"]), selectable),
      label: previewText(o, language),
    };
    (options ??= []).push(option);
    if (option.optionType === OptionType.cloze) {
      // The inputs inside a cloze option get their own columns, keyed `<option>.<input>`.
      for (const inner of records(o["items"])) {
        const optionType = embeddedClozeOptionType(text(inner["role"]));
        if (optionType === "") continue;
        options.push({ id: option.id + "." + text(inner["key"]), optionType, label: previewText(inner, language) });
      }
    }
  }
  return options;
}

function slot(id: string, responseType: string, label = "", options: ResponseOption[] | null = null): ResponseSlot {
  return { id, responseType, label, options };
}

/** The response slots one component of a response group contributes (none for display parts). */
export function responseSlots(comp: Json, language: string): ResponseSlot[] {
  const key = text(comp["key"]);
  const fullRole = text(comp["role"]);
  const sep = fullRole.indexOf(":");
  if (sep === 0) return [slot(key, QuestionType.unknown)];
  const role = sep === -1 ? fullRole : fullRole.slice(0, sep);
  const items = records(comp["items"]);

  switch (role) {
    case "singleChoiceGroup":
      return [slot(key, QuestionType.singleChoice, "", choiceOptions(comp, OptionType.radio, language))];
    case "multipleChoiceGroup":
      return [slot(key, QuestionType.multipleChoice, "", choiceOptions(comp, OptionType.checkbox, language))];
    case "dropDownGroup": {
      let options: ResponseOption[] | null = null;
      for (const o of items)
        (options ??= []).push({
          id: text(o["key"]),
          optionType: OptionType.dropdownOption,
          label: previewText(o, language),
        });
      return [slot(key, QuestionType.dropdown, "", options)];
    }
    case "input":
    case "validatedRandomQuestion":
    case "codeValidator":
    case "multilineTextInput":
      return [slot(key, QuestionType.text, previewText(comp, language))];
    case "consent":
      return [slot(key, QuestionType.consent, previewText(comp, language))];
    case "numberInput":
    case "timeInput":
      return [slot(key, QuestionType.number, previewText(comp, language))];
    case "dateInput":
      return [slot(key, QuestionType.date, previewText(comp, language))];
    case "eq5d-health-indicator":
      return [slot(key, QuestionType.eq5dSlider)];
    case "sliderNumeric":
      return [slot(key, QuestionType.slider, previewText(comp, language))];
    case "likert": {
      let options: ResponseOption[] | null = null;
      for (const o of items)
        (options ??= []).push({ id: text(o["key"]), optionType: OptionType.radio, label: previewText(o, language) });
      return [slot(key, QuestionType.likert, "", options)];
    }
    case "likertGroup": {
      const slots: ResponseSlot[] = [];
      for (const likert of items) {
        if (likert["role"] !== "likert") continue;
        let options: ResponseOption[] | null = null;
        // CASE leaves these option labels empty, whatever the language.
        for (const o of records(likert["items"]))
          (options ??= []).push({ id: text(o["key"]), optionType: OptionType.radio, label: "" });
        slots.push(slot(text(likert["key"]), QuestionType.likertGroup, "", options));
      }
      return slots;
    }
    case "responsiveSingleChoiceArray": {
      const optionsComp = items.find((c) => c["role"] === "options");
      if (optionsComp === undefined) return [];
      const slots: ResponseSlot[] = [];
      for (const row of items) {
        if (row["role"] !== "row") continue;
        let options: ResponseOption[] | null = null;
        for (const o of records(optionsComp["items"]))
          (options ??= []).push({ id: text(o["key"]), optionType: OptionType.radio, label: previewText(o, language) });
        slots.push(
          slot(text(row["key"]), QuestionType.responsiveSingleChoiceArray, previewText(row, language), options),
        );
      }
      return slots;
    }
    case "responsiveBipolarLikertScaleArray": {
      const optionsComp = items.find((c) => c["role"] === "options");
      if (optionsComp === undefined) return [];
      const slots: ResponseSlot[] = [];
      for (const row of items) {
        if (row["role"] !== "row") continue;
        const rowItems = records(row["items"]);
        const start = rowItems.find((c) => c["role"] === "start");
        const end = rowItems.find((c) => c["role"] === "end");
        let options: ResponseOption[] | null = null;
        // Option labels are the option keys (the scale has no text per point).
        for (const o of records(optionsComp["items"]))
          (options ??= []).push({ id: text(o["key"]), optionType: OptionType.radio, label: text(o["key"]) });
        const label = previewText(start, language) + " vs. " + previewText(end, language);
        slots.push(slot(text(row["key"]), QuestionType.responsiveBipolarLikertArray, label, options));
      }
      return slots;
    }
    case "matrix":
      return matrixSlots(key, items, language);
    case "responsiveMatrix": {
      const columns = items.find((c) => c["role"] === "columns");
      const rows = items.find((c) => c["role"] === "rows");
      if (columns === undefined || rows === undefined) return [];
      const slots: ResponseSlot[] = [];
      for (const row of records(rows["items"])) {
        if (row["role"] === "category") continue;
        const rowLabel = previewText(row, language);
        for (const col of records(columns["items"])) {
          const label = rowLabel + " || " + previewText(col, language);
          slots.push(slot(text(row["key"]) + "-" + text(col["key"]), QuestionType.responsiveTable, label));
        }
      }
      return slots;
    }
    case "cloze": {
      let options: ResponseOption[] | null = null;
      for (const o of items) {
        const optionType = clozeOptionType(text(o["role"]));
        if (optionType !== "")
          (options ??= []).push({ id: text(o["key"]), optionType, label: previewText(o, language) });
      }
      return [slot(key, QuestionType.cloze, "", options)];
    }
    case "contact": {
      const slots: ResponseSlot[] = [];
      for (const o of items) {
        const r = text(o["role"]);
        if (r === "fullName" || r === "company" || r === "email" || r === "phone") {
          slots.push(slot(key + "." + text(o["key"]), QuestionType.text, previewText(o, language)));
        } else if (r === "address") {
          slots.push(
            slot(key + ".street", QuestionType.text, "Street"),
            slot(key + ".street2", QuestionType.text, "Street 2"),
            slot(key + ".city", QuestionType.text, "City"),
            slot(key + ".postalCode", QuestionType.text, "Postal Code"),
            slot(key + ".country", QuestionType.text, "Country"),
          );
        }
      }
      return slots;
    }
    default:
      // A role with a sub-type CASE does not know (`foo:bar`) still gets a column; other parts
      // (texts, markdown, images) give none.
      return sep > 0 ? [slot(key, QuestionType.unknown)] : [];
  }
}

function matrixSlots(key: string, rows: Json[], language: string): ResponseSlot[] {
  const slots: ResponseSlot[] = [];
  for (const row of rows) {
    const rowKey = key + "." + text(row["key"]);
    const role = row["role"];
    if (role === "responseRow") {
      for (const col of records(row["items"])) {
        const cellKey = rowKey + "." + text(col["key"]);
        switch (col["role"]) {
          case "dropDownGroup": {
            let options: ResponseOption[] | null = null;
            for (const o of records(col["items"]))
              (options ??= []).push({
                id: text(o["key"]),
                optionType: OptionType.dropdownOption,
                label: previewText(o, language),
              });
            slots.push(slot(cellKey, QuestionType.matrixDropdown, "", options));
            break;
          }
          case "input":
            slots.push(slot(cellKey, QuestionType.matrixInput, previewText(col, language)));
            break;
          case "check":
            slots.push(slot(cellKey, QuestionType.matrixCheckbox));
            break;
          case "numberInput":
            slots.push(slot(cellKey, QuestionType.matrixNumberInput, previewText(col, language)));
            break;
          default:
            break; // labels and other cell parts
        }
      }
    } else if (role === "radioRow") {
      let label = "";
      let options: ResponseOption[] | null = null;
      for (const o of records(row["items"])) {
        if (o["role"] === "label") label = previewText(o, language);
        else (options ??= []).push({ id: text(o["key"]), optionType: OptionType.radio, label: "" });
      }
      slots.push(slot(rowKey, QuestionType.matrixRadioRow, label, options));
    }
  }
  return slots;
}

/** With short keys, question ids lose the `<surveyKey>.` prefix (as CASE's `shortKeys`). */
export function shortenKeys(previews: SurveyVersionPreview[], surveyKey: string): void {
  if (surveyKey === "") return;
  const prefix = surveyKey + ".";
  for (const version of previews) {
    for (const q of version.questions) if (q.id.startsWith(prefix)) q.id = q.id.slice(prefix.length);
    const keys = new Set<string>();
    for (const k of version.itemKeys) keys.add(k.startsWith(prefix) ? k.slice(prefix.length) : k);
    version.itemKeys = keys;
  }
}

/** Sorted, de-duplicated, in Go's string order. */
export function sortedUnique(names: Iterable<string>): string[] {
  return [...new Set(names)].sort(compareGoStrings);
}
