// Study status, session, flags and linking codes of the participant.
import type { EvalContext } from "../eval-context";
import { nowSeconds, reject } from "../eval-context";
import { finiteNumber } from "../finite-numbers";
import { actionFamily, anyArg, optional, strArg } from "../function-spec";
import { formatFixed6 } from "../go-compatible-format";
import { deleteEntry, replaceContainer, setEntry, setScalar } from "../state-writes";
import { textProblem } from "../text-values";

/** How the reference turned a value into flag text: numbers with six decimals ("1.000000"). */
export function flagText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return formatFixed6(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  return "";
}

function randomHex(ctx: EvalContext, bytes: number): string {
  let out = "";
  for (let i = 0; i < bytes; i++) {
    const r = ctx.env.random();
    const byte = Math.min(255, Math.max(0, Math.floor((r >= 0 && r < 1 ? r : 0) * 256)));
    out += byte.toString(16).padStart(2, "0");
  }
  return out;
}

export const participantActions = actionFamily("participant", [
  {
    name: "UPDATE_STUDY_STATUS",
    summary: "sets studyStatus to any string",
    participantFields: { reads: [], writes: ["studyStatus"] },
    args: [strArg("status", "could not parse argument")],
    bulkWrite: ([status]) =>
      typeof status === "string" && textProblem(status) === null ? { kind: "set-status", status } : null,
    perform: (ctx, [status]) => setScalar(ctx, "studyStatus", status as string),
  },
  {
    name: "START_NEW_STUDY_SESSION",
    summary: "currentStudySession = hex(now in seconds) + 8 random hex digits; arguments are ignored",
    participantFields: { reads: [], writes: ["currentStudySession"] },
    rest: (i) => anyArg(`ignored${i}`, { optional: true }),
    evaluatedArgs: () => 0,
    perform: (ctx) => setScalar(ctx, "currentStudySession", nowSeconds(ctx).toString(16) + randomHex(ctx, 4)),
  },
  {
    name: "UPDATE_FLAG",
    summary:
      'sets a flag; numbers become six-decimal text ("1.000000"; non-finite is an error), booleans "true"/"false", other values ""',
    participantFields: { reads: ["flags"], writes: ["flags"] },
    args: [strArg("key", "could not parse flag key"), anyArg("value")],
    bulkWrite: ([key, value]) => {
      if (typeof key !== "string" || (typeof value === "number" && !Number.isFinite(value))) return null;
      const text = flagText(value);
      return textProblem(key) === null && textProblem(text) === null ? { kind: "set-flag", key, value: text } : null;
    },
    perform: (ctx, [key, value]) => {
      if (typeof value === "number") {
        const finite = finiteNumber(value, "value");
        if (typeof finite === "string") return reject(ctx, finite);
      }
      return setEntry(ctx, "flags", key as string, flagText(value));
    },
  },
  {
    name: "REMOVE_FLAG",
    summary: "removes a flag",
    participantFields: { reads: ["flags"], writes: ["flags"] },
    args: [strArg("key", "could not parse key")],
    bulkWrite: ([key]) => (typeof key === "string" && textProblem(key) === null ? { kind: "remove-flag", key } : null),
    perform: (ctx, [key]) => deleteEntry(ctx, "flags", key as string),
  },
  {
    name: "SET_LINKING_CODE",
    summary: "sets linkingCodes[key]",
    participantFields: { reads: ["linkingCodes"], writes: ["linkingCodes"] },
    args: [strArg("key", "could not parse key"), strArg("value", "could not parse value")],
    perform: (ctx, [key, value]) => setEntry(ctx, "linkingCodes", key as string, value as string),
  },
  {
    name: "DELETE_LINKING_CODE",
    summary: "removes one linking code, or all of them without an argument",
    participantFields: { reads: ["linkingCodes"], writes: ["linkingCodes"] },
    args: [optional(strArg("key", "could not parse key"))],
    perform: (ctx, args) =>
      args.length === 0
        ? replaceContainer(ctx, "linkingCodes", {})
        : deleteEntry(ctx, "linkingCodes", args[0] as string),
  },
]);
