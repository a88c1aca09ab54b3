// IF, DO and IFTHEN run other actions. They compile their own closures so that a branch of pure
// actions stays synchronous while one that reaches a service port becomes async.
import type { CompiledAction, CompiledArg, EvalContext } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, actionArg, actionFamily, conditionArg, optional } from "../function-spec";

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
        const branch = condition(ctx) === true ? thenAction : elseAction;
        return branch ? branch.run(ctx) : true;
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      const branch = (await condition(ctx)) === true ? thenAction : elseAction;
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

/** Every action runs even when an earlier one fails; all failures are reported, not just the last. */
function compileIfThen(args: readonly CompiledArg[]): CompiledAction {
  const condition = conditionRunner(args[0]);
  const actions = actionsOf(args.slice(1));
  const finish = (ctx: EvalContext, failures: string[] | undefined): boolean => {
    if (!failures) return true;
    ctx.error = failures.join("; ");
    return false;
  };
  if (!args.some((a) => a.isAsync)) {
    return {
      isAsync: false,
      run: (ctx) => {
        if (condition(ctx) !== true) return true;
        let failures: string[] | undefined;
        for (const action of actions) if (!action.run(ctx)) (failures ??= []).push(ctx.error);
        return finish(ctx, failures);
      },
    };
  }
  return {
    isAsync: true,
    run: async (ctx) => {
      if ((await condition(ctx)) !== true) return true;
      let failures: string[] | undefined;
      for (const action of actions) if (!(await action.run(ctx))) (failures ??= []).push(ctx.error);
      return finish(ctx, failures);
    },
  };
}

// Control flow touches no field itself: the conditions and actions it runs are arguments and declare their own.
export const controlActions = actionFamily("control", [
  {
    name: "IF",
    summary: "runs the then-action if the condition holds, else the optional else-action",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [conditionArg(), actionArg("then"), optional(actionArg("else"))],
    compile: compileIf,
  },
  {
    name: "DO",
    summary: "runs the actions in order; stops at the first failure",
    participantFields: NO_PARTICIPANT_FIELDS,
    rest: (i) => actionArg(`action${i}`, { optional: true }),
    compile: compileDo,
  },
  {
    name: "IFTHEN",
    summary: "if the condition holds, runs every action; fails with all failing actions' messages combined",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [conditionArg()],
    rest: (i) => actionArg(`action${i}`, { optional: true }),
    compile: compileIfThen,
  },
]);
