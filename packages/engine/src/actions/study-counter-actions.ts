// Study counters behind the service port.
import type { EvalContext } from "../eval-context";
import { reject } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, actionFamily, numArg, optional, strArg } from "../function-spec";
import { formatPaddedCounter } from "../go-compatible-format";
import { setEntry } from "../state-writes";

/** Wider padding cannot be meant, and a huge one would allocate a huge string. */
const MAX_PADDING = 64;

async function nextCounterText(ctx: EvalContext, args: unknown[]): Promise<string | null> {
  const prefix = args.length > 2 ? (args[2] as string) : "";
  const padding = args.length > 3 ? Math.trunc(args[3] as number) : 0;
  if (!(Math.abs(padding) <= MAX_PADDING)) {
    reject(ctx, `padding must be between -${MAX_PADDING} and ${MAX_PADDING}`);
    return null;
  }
  const value = await ctx.services.incrementCounter(args[0] as string);
  return formatPaddedCounter(prefix, padding, value);
}

function counterInto(field: "flags" | "linkingCodes") {
  return async (ctx: EvalContext, args: unknown[]): Promise<boolean> => {
    const text = await nextCounterText(ctx, args);
    if (text === null) return false;
    return setEntry(ctx, field, args[1] as string, text);
  };
}

const counterArgs = (keyName: string) => [
  strArg("scope", "could not parse scope"),
  strArg(keyName, `could not parse ${keyName}`),
  optional(strArg("prefix", "could not parse prefix")),
  optional(numArg("padding", "could not parse padding")),
];

export const studyCounterActions = actionFamily("study counters", [
  {
    name: "GET_NEXT_STUDY_COUNTER_AS_FLAG",
    summary: "increments the counter; flags[flagKey] = prefix + value zero-padded to `padding` digits",
    participantFields: { reads: ["flags"], writes: ["flags"] },
    usesServices: true,
    args: counterArgs("flagKey"),
    perform: counterInto("flags"),
  },
  {
    name: "GET_NEXT_STUDY_COUNTER_AS_LINKING_CODE",
    summary: "increments the counter; linkingCodes[linkingCodeKey] = prefix + value zero-padded to `padding` digits",
    participantFields: { reads: ["linkingCodes"], writes: ["linkingCodes"] },
    usesServices: true,
    args: counterArgs("linkingCodeKey"),
    perform: counterInto("linkingCodes"),
  },
  {
    name: "RESET_STUDY_COUNTER",
    summary: "deletes the counter; the next increment yields 1",
    participantFields: NO_PARTICIPANT_FIELDS,
    usesServices: true,
    args: [strArg("scope", "could not parse scope")],
    perform: async (ctx, [scope]) => {
      await ctx.services.resetCounter(scope as string);
      return true;
    },
  },
]);
