/** The JSON columns of a participant: the expensive part of reading a row. */
export type JsonField = "flags" | "linkingCodes" | "assignedSurveys" | "lastSubmissions" | "messages";
export const JSON_FIELDS: readonly JsonField[] = [
  "flags",
  "linkingCodes",
  "assignedSurveys",
  "lastSubmissions",
  "messages",
];

/** Which JSON fields each expression or action reads or writes (writing implies reading: a column is written whole). */
const FIELDS_OF: Record<string, readonly JsonField[]> = {
  hasParticipantFlag: ["flags"],
  hasParticipantFlagKey: ["flags"],
  getParticipantFlagValue: ["flags"],
  UPDATE_FLAG: ["flags"],
  REMOVE_FLAG: ["flags"],
  GET_NEXT_STUDY_COUNTER_AS_FLAG: ["flags"],
  hasLinkingCode: ["linkingCodes"],
  getLinkingCodeValue: ["linkingCodes"],
  SET_LINKING_CODE: ["linkingCodes"],
  DELETE_LINKING_CODE: ["linkingCodes"],
  DRAW_STUDY_CODE_AS_LINKING_CODE: ["linkingCodes"],
  GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE: ["linkingCodes"],
  SEND_MESSAGE_NOW: ["flags", "linkingCodes"],
  hasSurveyKeyAssigned: ["assignedSurveys"],
  getSurveyKeyAssignedFrom: ["assignedSurveys"],
  getSurveyKeyAssignedUntil: ["assignedSurveys"],
  ADD_NEW_SURVEY: ["assignedSurveys"],
  REMOVE_ALL_SURVEYS: ["assignedSurveys"],
  REMOVE_SURVEY_BY_KEY: ["assignedSurveys"],
  REMOVE_SURVEYS_BY_KEY: ["assignedSurveys"],
  getLastSubmissionDate: ["lastSubmissions"],
  lastSubmissionDateOlderThan: ["lastSubmissions"],
  hasMessageTypeAssigned: ["messages"],
  getMessageNextTime: ["messages"],
  ADD_MESSAGE: ["messages"],
  REMOVE_ALL_MESSAGES: ["messages"],
  REMOVE_MESSAGES_BY_TYPE: ["messages"],
};

/** Names that touch no JSON field of the participant (event, scalars, study data, logic, time, reports). */
const FIELD_FREE = new Set([
  "checkEventType",
  "checkEventKey",
  "checkSurveyResponseKey",
  "responseHasKeysAny",
  "responseHasOnlyKeysOtherThan",
  "getResponseValueAsNum",
  "getResponseValueAsStr",
  "getSelectedKeys",
  "countResponseItems",
  "hasResponseKey",
  "hasResponseKeyWithValue",
  "isStudyCodePresent",
  "getCurrentStudyCounterValue",
  "getNextStudyCounterValue",
  "getStudyVariableBoolean",
  "getStudyVariableInt",
  "getStudyVariableFloat",
  "getStudyVariableString",
  "getStudyVariableDate",
  "hasEventPayload",
  "getEventPayloadValueAsStr",
  "getEventPayloadValueAsNum",
  "hasEventPayloadKey",
  "hasEventPayloadKeyWithValue",
  "getStudyEntryTime",
  "hasStudyStatus",
  "getCurrentStudySession",
  "eq",
  "lt",
  "lte",
  "gt",
  "gte",
  "and",
  "or",
  "not",
  "sum",
  "neg",
  "timestampWithOffset",
  "getTsForNextStartOfMonth",
  "getISOWeekForTs",
  "getTsForNextISOWeek",
  "dateToStr",
  "parseValueAsNum",
  "generateRandomNumber",
  "IF",
  "DO",
  "IFTHEN",
  "UPDATE_STUDY_STATUS",
  "START_NEW_STUDY_SESSION",
  "NOTIFY_RESEARCHER",
  "INIT_REPORT",
  "UPDATE_REPORT_DATA",
  "REMOVE_REPORT_DATA",
  "CANCEL_REPORT",
  "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY",
  "REMOVE_ALL_CONFIDENTIAL_RESPONSES",
  "REMOVE_STUDY_CODE",
  "RESET_STUDY_COUNTER",
  "UPDATE_STUDY_VARIABLE_BOOLEAN",
  "UPDATE_STUDY_VARIABLE_INT",
  "UPDATE_STUDY_VARIABLE_FLOAT",
  "UPDATE_STUDY_VARIABLE_STRING",
  "UPDATE_STUDY_VARIABLE_DATE",
]);

/**
 * The JSON fields a rule set can read or write, found by walking its expression tree, so a bulk
 * run loads only those columns. `incomingState:` expressions read the merge partner, never the
 * participant; `checkConditionForOldResponses` is covered by walking its condition. Anything not
 * known to be field-free (external services see and may replace the whole state) loads every field.
 */
export function jsonFieldsUsedBy(rules: readonly unknown[]): ReadonlySet<JsonField> {
  const used = new Set<JsonField>();
  let everything = false;
  const visit = (node: unknown) => {
    if (everything || node === null || typeof node !== "object") return;
    const { name, data } = node as { name?: unknown; data?: unknown };
    if (typeof name === "string") {
      const fields = FIELDS_OF[name];
      if (fields) fields.forEach((field) => used.add(field));
      else if (
        !FIELD_FREE.has(name) &&
        !name.startsWith("incomingState:") &&
        name !== "checkConditionForOldResponses"
      ) {
        everything = true;
        return;
      }
    }
    if (Array.isArray(data)) for (const arg of data) visit((arg as { exp?: unknown } | null)?.exp);
  };
  rules.forEach(visit);
  return everything ? new Set(JSON_FIELDS) : used;
}
