import type { Executor, StudyConfig } from "@studyflow/db";
import { Invalid } from "../errors";
import type { RuleFailureRecord } from "./rule-failures";
import { surveyVersionStanding } from "../surveys/survey-versions";

/** What a study does with a response whose versionId names no uploaded version of its survey. */
export type UnknownSurveyVersionPolicy = NonNullable<StudyConfig["unknownSurveyVersion"]>;

/** Responses with unknown versions are stored, and the mismatch recorded for researchers. */
export const DEFAULT_UNKNOWN_SURVEY_VERSION: UnknownSurveyVersionPolicy = "record";

/**
 * The rule-failure fields of a version check, which is no study rule: ruleIndex -1 and
 * rulesVersion null say so, and the path names the response field that failed the check.
 */
export const VERSION_CHECK_RULE_INDEX = -1;
export const VERSION_CHECK_PATH = "response.versionId";

export interface CheckedResponse {
  studyKey: string;
  config: StudyConfig;
  participantId: string;
  surveyKey: string;
  versionId: string | undefined;
}

/**
 * Checks a submitted response's versionId against the versions uploaded for its survey in this
 * study (unpublished ones count: a client may still hold one). An empty or missing versionId is
 * not checked. Under "reject" an unknown one is an Invalid (400) and nothing is stored, also when
 * the study holds no version of the survey at all. Under "record" (the default) the response goes
 * on and the returned record, a `rule-skipped` failure of the SUBMIT event, is what the caller
 * stores next to it for researchers to list; a survey of which the study holds no version is not
 * checked there, so a study that keeps its survey definitions elsewhere (as CASE studies moved
 * here unchanged do at first) gets no record per response.
 *
 * @throws Invalid when the study rejects unknown versions.
 */
export async function checkResponseVersion(tx: Executor, response: CheckedResponse): Promise<RuleFailureRecord | null> {
  const { versionId, surveyKey, studyKey } = response;
  if (versionId === undefined || versionId === "") return null;
  const standing = await surveyVersionStanding(tx, studyKey, surveyKey, versionId);
  if (standing === "version-known") return null;
  const policy = response.config.unknownSurveyVersion ?? DEFAULT_UNKNOWN_SURVEY_VERSION;
  if (policy === "record" && standing === "survey-unknown") return null;
  const unknown = `versionId "${versionId}" is not an uploaded version of survey "${surveyKey}" in study "${studyKey}"`;
  if (policy === "reject") throw new Invalid(`${unknown}; the study rejects such responses`);
  return {
    studyKey,
    participantId: response.participantId,
    eventType: "SUBMIT",
    eventKey: surveyKey,
    rulesVersion: null,
    ruleIndex: VERSION_CHECK_RULE_INDEX,
    path: VERSION_CHECK_PATH,
    message: `${unknown}; the response was stored (the study records unknown versions)`,
    outcome: "rule-skipped",
  };
}
