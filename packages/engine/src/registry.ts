// The one table from name to implementation, arity, argument types and the participant fields each
// function uses. The validator, the compiler, fieldsUsedBy and the generated documentation read it.
import { confidentialResponseActions } from "./actions/confidential-response-actions";
import { controlActions } from "./actions/control-actions";
import { externalActions } from "./actions/external-actions";
import { messageActions } from "./actions/message-actions";
import { participantActions } from "./actions/participant-actions";
import { reportActions } from "./actions/report-actions";
import { studyCodeActions } from "./actions/study-code-actions";
import { studyCounterActions } from "./actions/study-counter-actions";
import { studyVariableActions } from "./actions/study-variable-actions";
import { surveyActions } from "./actions/survey-actions";
import { comparisonExpressions } from "./expressions/comparison-expressions";
import { eventExpressions } from "./expressions/event-expressions";
import { externalExpressions } from "./expressions/external-expressions";
import { logicExpressions } from "./expressions/logic-expressions";
import { mathExpressions } from "./expressions/math-expressions";
import { oldResponseExpressions } from "./expressions/old-response-expressions";
import { incomingStateExpressions, participantExpressions } from "./expressions/participant-expressions";
import { responseExpressions } from "./expressions/response-expressions";
import { studyDataExpressions } from "./expressions/study-data-expressions";
import { timeExpressions } from "./expressions/time-expressions";
import type { ActionSpec, ExpressionSpec } from "./function-spec";

export const expressionSpecs: readonly ExpressionSpec[] = [
  ...eventExpressions,
  ...responseExpressions,
  ...oldResponseExpressions,
  ...studyDataExpressions,
  ...participantExpressions,
  ...incomingStateExpressions,
  ...comparisonExpressions,
  ...logicExpressions,
  ...mathExpressions,
  ...timeExpressions,
  ...externalExpressions,
];

export const actionSpecs: readonly ActionSpec[] = [
  ...controlActions,
  ...participantActions,
  ...surveyActions,
  ...messageActions,
  ...reportActions,
  ...confidentialResponseActions,
  ...externalActions,
  ...studyCodeActions,
  ...studyCounterActions,
  ...studyVariableActions,
];

function byName<T extends { name: string }>(specs: readonly T[]): ReadonlyMap<string, T> {
  const map = new Map<string, T>();
  for (const spec of specs) {
    if (map.has(spec.name)) throw new Error(`registry: ${spec.name} is registered twice`);
    map.set(spec.name, spec);
  }
  return map;
}

const expressionsByName = byName(expressionSpecs);
const actionsByName = byName(actionSpecs);

export function expressionSpec(name: string): ExpressionSpec | undefined {
  return expressionsByName.get(name);
}

export function actionSpec(name: string): ActionSpec | undefined {
  return actionsByName.get(name);
}

/** All 73 expression names. */
export const expressionNames: readonly string[] = Object.freeze(expressionSpecs.map((s) => s.name));

/** All 35 action names. */
export const actionNames: readonly string[] = Object.freeze(actionSpecs.map((s) => s.name));
