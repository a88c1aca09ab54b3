/**
 * The codebook of a survey (CASE's `data-exporter/survey-info`): every version's questions, their
 * response slots and options, with titles and labels in one language.
 */
import { csvRecord } from "./go-csv";
import { goJsonNumber, goJsonString } from "./go-json";
import {
  previewVersions,
  shortenKeys,
  type ResponseOption,
  type ResponseSlot,
  type SurveyQuestion,
  type SurveyVersionPreview,
} from "./survey-questions";
import type { SurveyVersionInput } from "./types";

export interface SurveyInfoOptions {
  /** Language of titles and labels; "" (or "ignored") leaves them empty. CASE's route defaults to "en". */
  language: string;
  shortKeys: boolean;
  format: "csv" | "json";
  /** Names the file as CASE does (`survey-infos_<study>_<survey>.<ext>`). */
  studyKey?: string;
  /** Not in CASE; see ResponseExportOptions.guardFormulas. @defaultValue false */
  guardFormulas?: boolean;
}

export interface SurveyInfoFile {
  contentType: string;
  fileName: string;
  text: string;
}

const CSV_HEADER = [
  "surveyKey",
  "versionID",
  "questionKey",
  "title",
  "responseKey",
  "type",
  "optionKey",
  "optionType",
  "optionLabel",
];

export function surveyInfo(
  surveyKey: string,
  versions: readonly SurveyVersionInput[],
  options: SurveyInfoOptions,
): SurveyInfoFile {
  const previews = previewVersions(versions, options.language);
  if (options.shortKeys) shortenKeys(previews, surveyKey);
  const base = "survey-infos_" + (options.studyKey === undefined ? "" : options.studyKey + "_") + surveyKey;
  if (options.format === "json") {
    return {
      // gin's c.JSON
      contentType: "application/json; charset=utf-8",
      fileName: base + ".json",
      text: surveyInfoJson(surveyKey, previews),
    };
  }
  return {
    contentType: "text/csv",
    fileName: base + ".csv",
    text: surveyInfoCsv(surveyKey, previews, options.guardFormulas === true),
  };
}

function surveyInfoCsv(surveyKey: string, versions: readonly SurveyVersionPreview[], guard: boolean): string {
  let text = csvRecord(CSV_HEADER, guard);
  versions.forEach((version, i) => {
    // A version without id is named by its position, newest first.
    const versionName = version.versionId === "" ? String(i) : version.versionId;
    for (const q of version.questions) {
      for (const slot of q.responses) {
        const lead = [surveyKey, versionName, q.id, q.title, slot.id, slot.responseType];
        if (slot.options !== null && slot.options.length > 0) {
          for (const o of slot.options) text += csvRecord([...lead, o.id, o.optionType, o.label], guard);
        } else {
          text += csvRecord([...lead, "", "", ""], guard);
        }
      }
    }
  });
  return text;
}

/** `{"key":…,"versions":[…]}` as Go marshals CASE's preview structs (fields in struct order). */
function surveyInfoJson(surveyKey: string, versions: readonly SurveyVersionPreview[]): string {
  // CASE's list is nil when the survey has no versions: `null`, not `[]`.
  const list = versions.length === 0 ? "null" : "[" + versions.map(versionJson).join(",") + "]";
  return '{"key":' + goJsonString(surveyKey) + ',"versions":' + list + "}";
}

function versionJson(v: SurveyVersionPreview): string {
  return (
    '{"versionId":' +
    goJsonString(v.versionId) +
    ',"published":' +
    goJsonNumber(v.published) +
    ',"unpublished":' +
    goJsonNumber(v.unpublished) +
    ',"questions":[' +
    v.questions.map(questionJson).join(",") +
    "]}"
  );
}

function questionJson(q: SurveyQuestion): string {
  return (
    '{"id":' +
    goJsonString(q.id) +
    ',"title":' +
    goJsonString(q.title) +
    ',"questionType":' +
    goJsonString(q.questionType) +
    ',"responses":[' +
    q.responses.map(slotJson).join(",") +
    "]}"
  );
}

function slotJson(r: ResponseSlot): string {
  const options = r.options === null ? "null" : "[" + r.options.map(optionJson).join(",") + "]";
  return (
    '{"id":' +
    goJsonString(r.id) +
    ',"responseType":' +
    goJsonString(r.responseType) +
    ',"label":' +
    goJsonString(r.label) +
    ',"options":' +
    options +
    "}"
  );
}

function optionJson(o: ResponseOption): string {
  return (
    '{"id":' +
    goJsonString(o.id) +
    ',"optionType":' +
    goJsonString(o.optionType) +
    ',"label":' +
    goJsonString(o.label) +
    "}"
  );
}
