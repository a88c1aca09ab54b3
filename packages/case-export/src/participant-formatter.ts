/**
 * The participant export (`data-exporter/participants`): one JSON document of participant states,
 * each as Go marshals CASE's Participant struct (fields in struct order, maps with sorted keys).
 */
import { goJsonNumber, goJsonNumberMap, goJsonString, goJsonStringMap, int64Of } from "./go-json";
import { jsonArrayFormatter } from "./row-formatters";
import type { ExportFormatter } from "./types";

/** A participant row as studyflow stores it. Times in Unix seconds. */
export interface ExportParticipant {
  /** The row's id; CASE always writes one (its document id). */
  id: string;
  participantId: string;
  currentStudySession?: string;
  studyStatus: string;
  enteredAt: number;
  modifiedAt: number;
  flags: Record<string, string>;
  linkingCodes: Record<string, string>;
  assignedSurveys: {
    surveyKey: string;
    validFrom: number;
    validUntil: number;
    category: string;
    studyKey?: string;
    profileID?: string;
  }[];
  lastSubmissions: Record<string, number>;
  messages: { id: string; type: string; scheduledFor: number }[];
  hashedAccountId?: string | null;
  isMainProfile?: boolean | null;
}

export interface ParticipantExportOptions {
  /** Written into assigned surveys stored without their study key. */
  studyKey: string;
}

export function participantJson(p: ExportParticipant, studyKey: string): string {
  let out =
    '{"id":' +
    goJsonString(p.id) +
    ',"participantId":' +
    goJsonString(p.participantId) +
    ',"currentStudySession":' +
    goJsonString(p.currentStudySession ?? "") +
    ',"modifiedAt":' +
    goJsonNumber(int64Of(p.modifiedAt)) +
    ',"enteredAt":' +
    goJsonNumber(int64Of(p.enteredAt)) +
    ',"studyStatus":' +
    goJsonString(p.studyStatus) +
    ',"flags":' +
    goJsonStringMap(p.flags ?? {}) +
    ',"linkingCodes":' +
    goJsonStringMap(p.linkingCodes ?? {}) +
    ',"assignedSurveys":[';
  const surveys = p.assignedSurveys ?? [];
  for (let i = 0; i < surveys.length; i++) {
    const s = surveys[i]!;
    out +=
      (i === 0 ? "" : ",") +
      '{"studyKey":' +
      goJsonString(s.studyKey ?? studyKey) +
      ',"surveyKey":' +
      goJsonString(s.surveyKey) +
      ',"validFrom":' +
      goJsonNumber(int64Of(s.validFrom)) +
      ',"validUntil":' +
      goJsonNumber(int64Of(s.validUntil)) +
      ',"category":' +
      goJsonString(s.category ?? "") +
      ',"profileID":' +
      goJsonString(s.profileID ?? "") +
      "}";
  }
  out += '],"lastSubmissions":' + goJsonNumberMap(p.lastSubmissions ?? {}) + ',"messages":[';
  const messages = p.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    out +=
      (i === 0 ? "" : ",") +
      '{"id":' +
      goJsonString(m.id) +
      ',"type":' +
      goJsonString(m.type) +
      ',"scheduledFor":' +
      goJsonNumber(int64Of(m.scheduledFor)) +
      "}";
  }
  out += "]";
  // Both are pointers with omitempty in CASE: absent unless the study tracked the account.
  if (p.hashedAccountId !== null && p.hashedAccountId !== undefined)
    out += ',"hashedAccountID":' + goJsonString(p.hashedAccountId);
  if (p.isMainProfile !== null && p.isMainProfile !== undefined)
    out += ',"isMainProfile":' + (p.isMainProfile ? "true" : "false");
  return out + "}";
}

export function createParticipantFormatter(options: ParticipantExportOptions): ExportFormatter<ExportParticipant> {
  return jsonArrayFormatter('{"participants": [', (p) => participantJson(p, options.studyKey));
}
