/** A survey as a participant opens it: the current version with its context and prefill (CASE's getSurveyWithContext). */
export * from "./survey-availability";
export * from "./survey-with-context";
