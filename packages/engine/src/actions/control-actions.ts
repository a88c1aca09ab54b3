// IF, DO and IFTHEN run other actions. They compile their own closures so that a branch of pure
// actions stays synchronous while one that reaches a service port becomes async.
import type { CompiledAction, CompiledArg, EvalContext } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, actionArg, actionFamily, conditionArg, optional } from "../function-spec";
import { releaseState, replaceState } from "../state-writes";

type ConditionRun = (ctx: EvalContext) => unknown;

/**
 * A condition holds only for an expression that evaluates, without error, to boolean true, or for a
 * literal whose num is not 0 (whatever its dtype, as in the reference).
 */
function conditionRunner(arg: CompiledArg | undefined): ConditionRun {
  if (arg?.role === "expression") return arg.expression.run;
  const holds = arg?.role === "literal" && arg.num !== 0;
  return () => holds;
}

/** Literal arguments in action positions are ignored, as the reference ignored them. */
function actionsOf(args: readonly CompiledArg[]): CompiledAction[] {
  return args.flatMap((a) => (a.role === "action" ? [a.action] : []));
}

const actionAt = (args: readonly CompiledArg[], i: number): CompiledAction | undefined => {
  const a = args[i];
  return a?.role === "action" ? a.action : undefined;
};

function compileIf(args: readonly CompiledArg[]): CompiledAction {
  const condition = conditionRunner(args[0]);
  const thenAction = actionAt(args, 1);
  const elseAction = actionAt(args, 2);
  if (!args.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        const holds = condition(ctx) === true;
        // a failing condition counts as false: its failure is not the branch's
        ctx.errorPath = null;
        const branch = holds ? thenAction : elseAction;
        return branch ? branch.run(ctx) : true;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      const holds = (await condition(ctx)) === true;
      ctx.errorPath = null;
      const branch = holds ? thenAction : elseAction;
      return branch ? await branch.run(ctx) : true;
    },
  };
}

function compileDo(args: readonly CompiledArg[]): CompiledAction {
  const actions = actionsOf(args);
  if (!actions.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        for (const action of actions) if (!action.run(ctx)) return false;
        return true;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      for (const action of actions) if (!(await action.run(ctx))) return false;
      return true;
    },
  };
}

function beforeAction(ctx: EvalContext, action: CompiledAction): void {
  // Only control flow can fail after writing part of its work; for it the next write copies the
  // state again, so the state before it is never changed in place. An ordinary action fails
  // before its one write, so the state needs no copy (copies per action would cost every rule,
  // not just the failing ones).
  if (action.writesInSteps === true) releaseState(ctx);
  ctx.errorPath = null;
}

/** A failed action leaves nothing behind; its failure is reported and the IFTHEN goes on. */
function skipFailedAction(
  ctx: EvalContext,
  state: EvalContext["state"],
  reports: EvalContext["reports"],
  effects: EvalContext["effects"],
  path: string,
): void {
  replaceState(ctx, state);
  ctx.reports = reports;
  ctx.effects = effects;
  (ctx.skippedActions ??= []).push({ ruleIndex: ctx.ruleIndex, path: ctx.errorPath ?? path, message: ctx.error });
  ctx.errorPath = null;
}

/**
 * As in the reference: if the condition holds, every action runs in order, and a failing action
 * does not stop the ones after it. The failing action's own changes are dropped (it runs all or
 * nothing), the others' stand, and the IFTHEN itself succeeds; each failure is reported in the
 * result's skippedActions. A failing condition counts as not holding.
 */
function compileIfThen(args: readonly CompiledArg[]): CompiledAction {
  const condition = conditionRunner(args[0]);
  const actionArgs = args.slice(1).flatMap((a) => (a.role === "action" ? [a] : []));
  const conditionHolds = (ctx: EvalContext, value: unknown): boolean => {
    // a condition's failure is not the actions' failure
    ctx.errorPath = null;
    return value === true;
  };
  if (!args.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        if (!conditionHolds(ctx, condition(ctx))) return true;
        for (const { action, path } of actionArgs) {
          beforeAction(ctx, action);
          const { state, reports, effects } = ctx;
          if (!action.run(ctx)) skipFailedAction(ctx, state, reports, effects, path);
        }
        return true;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      if (!conditionHolds(ctx, await condition(ctx))) return true;
      for (const { action, path } of actionArgs) {
        beforeAction(ctx, action);
        const { state, reports, effects } = ctx;
        if (!(await action.run(ctx))) skipFailedAction(ctx, state, reports, effects, path);
      }
      return true;
    },
  };
}

// Control flow touches no field itself: the conditions and actions it runs are arguments and declare their own.
export const controlActions = actionFamily("control", [
  {
    name: "IF",
    summary: "runs the then-action if the condition holds, else the optional else-action",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "if" },
    args: [conditionArg(), actionArg("then"), optional(actionArg("else"))],
    compile: compileIf,
  },
  {
    name: "DO",
    summary: "runs the actions in order; stops at the first failure",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "do" },
    rest: (i) => actionArg(`action${i}`, { optional: true }),
    compile: compileDo,
  },
  {
    name: "IFTHEN",
    summary:
      "if the condition holds, runs every action in order; a failing action's own changes are dropped, it is reported, and the rest still run",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: { kind: "ifthen" },
    args: [conditionArg()],
    rest: (i) => actionArg(`action${i}`, { optional: true }),
    compile: compileIfThen,
  },
]);
