import type { Expression, ExpressionArg } from "@studyflow/engine";

/** Builders of the rule JSON, so rules in tests and benchmarks read like the rules researchers write. */
export const str = (value: string): ExpressionArg => ({ dtype: "str", str: value });
export const num = (value: number): ExpressionArg => ({ dtype: "num", num: value });
export const exp = (expression: Expression): ExpressionArg => ({ dtype: "exp", exp: expression });
export const call = (name: string, ...data: ExpressionArg[]): Expression => ({ name, data });

/** `IFTHEN(checkEventType(type), actions…)`: the usual shape of a top-level rule. */
export const onEvent = (type: string, ...actions: Expression[]): Expression =>
  call("IFTHEN", exp(call("checkEventType", str(type))), ...actions.map(exp));
