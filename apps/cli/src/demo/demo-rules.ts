import type { Expression, ExpressionArg } from "@studyflow/engine";

const str = (value: string): ExpressionArg => ({ dtype: "str", str: value });
const num = (value: number): ExpressionArg => ({ dtype: "num", num: value });
const exp = (expression: Expression): ExpressionArg => ({ dtype: "exp", exp: expression });
const call = (name: string, ...data: ExpressionArg[]): Expression => ({ name, data });
const when = (condition: Expression, ...actions: Expression[]): Expression =>
  call("IFTHEN", exp(condition), ...actions.map(exp));
const event = (type: string) => call("checkEventType", str(type));
const WEEK = 7 * 24 * 3600;
const fromNow = (seconds: number) => exp(call("timestampWithOffset", num(seconds)));

/**
 * The demo study's rules, in the CASE study-engine language:
 * - ENTER assigns the intake survey for a week (and marks anonymous registrations);
 * - submitting the intake replaces it with the weekly survey and sets intakeDone=yes;
 * - LEAVE removes all surveys;
 * - MERGE keeps the temporary participant's flags (its registration source and consent).
 */
export const demoRules: Expression[] = [
  when(
    event("ENTER"),
    call("ADD_NEW_SURVEY", str("intake"), fromNow(0), fromNow(WEEK), str("prio")),
    call(
      "IF",
      exp(call("hasStudyStatus", str("temporary"))),
      exp(call("UPDATE_FLAG", str("source"), str("anonymous"))),
    ),
  ),
  when(
    call("and", exp(event("SUBMIT")), exp(call("checkSurveyResponseKey", str("intake")))),
    call("REMOVE_SURVEYS_BY_KEY", str("intake")),
    call("ADD_NEW_SURVEY", str("weekly"), fromNow(0), fromNow(WEEK), str("normal")),
    call("UPDATE_FLAG", str("intakeDone"), str("yes")),
  ),
  when(event("LEAVE"), call("REMOVE_ALL_SURVEYS")),
  when(
    event("MERGE"),
    ...["source", "consent"].map((flag) =>
      call(
        "IF",
        exp(call("incomingState:hasParticipantFlagKey", str(flag))),
        exp(call("UPDATE_FLAG", str(flag), exp(call("incomingState:getParticipantFlagValue", str(flag))))),
      ),
    ),
  ),
];

/** The bulk action of the walkthrough: remind everyone whose intake is not done yet. */
export const demoBulkRules: Expression[] = [
  call(
    "IF",
    exp(call("not", exp(call("hasParticipantFlag", str("intakeDone"), str("yes"))))),
    exp(call("UPDATE_FLAG", str("reminder"), str("intake-due"))),
  ),
];
