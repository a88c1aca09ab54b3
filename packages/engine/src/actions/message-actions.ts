// Scheduled participant messages, researcher notifications and immediate messages. Notifications
// and immediate messages are returned as side effects for the caller to persist.
import type { EvalContext } from "../eval-context";
import { reject } from "../eval-context";
import { finiteTimestamp } from "../finite-numbers";
import { actionFamily, anyArg, numArg, optional, strArg } from "../function-spec";
import { formatValueV } from "../go-compatible-format";
import { setOwn } from "../participant-state";
import { firstTextProblem } from "../text-values";
import type { ImmediateMessage, SideEffect } from "../types";
import { appendItem, keepItems, replaceContainer } from "../state-writes";

const PARSE = "could not parse arguments";

export function addEffect(ctx: EvalContext, effect: SideEffect): boolean {
  const problem = firstTextProblem(effect, "message");
  if (problem) return reject(ctx, problem);
  ctx.effects = [...ctx.effects, effect];
  return true;
}

/** The template payload of an immediate message: study key, flags, linking codes, event payload as text. */
function messagePayload(ctx: EvalContext): Record<string, string> {
  const payload: Record<string, string> = { studyKey: ctx.event.studyKey };
  for (const [k, v] of Object.entries(ctx.state.flags)) setOwn(payload, `flags.${k}`, v);
  for (const [k, v] of Object.entries(ctx.state.linkingCodes)) setOwn(payload, `linkingCodes.${k}`, v);
  const eventPayload = ctx.event.payload;
  if (eventPayload !== null && typeof eventPayload === "object") {
    for (const [k, v] of Object.entries(eventPayload)) setOwn(payload, `eventData.${k}`, formatValueV(v));
  }
  return payload;
}

export const messageActions = actionFamily("message", [
  {
    name: "ADD_MESSAGE",
    summary:
      "schedules a message {id (env.newId), type, scheduledFor}; scheduledFor truncated to whole seconds (non-finite or beyond ±(2^53 − 1) is an error)",
    participantFields: { reads: ["messages"], writes: ["messages"] },
    args: [strArg("messageType", PARSE), numArg("scheduledFor", PARSE)],
    perform: (ctx, [type, at]) => {
      const scheduledFor = finiteTimestamp(at as number, "scheduledFor");
      if (typeof scheduledFor === "string") return reject(ctx, scheduledFor);
      return appendItem(ctx, "messages", { id: ctx.env.newId(), type: type as string, scheduledFor });
    },
  },
  {
    name: "REMOVE_ALL_MESSAGES",
    summary: "messages = []; arguments are ignored",
    participantFields: { reads: [], writes: ["messages"] },
    rest: (i) => anyArg(`ignored${i}`, { optional: true }),
    evaluatedArgs: () => 0,
    perform: (ctx) => replaceContainer(ctx, "messages", []),
  },
  {
    name: "REMOVE_MESSAGES_BY_TYPE",
    summary: "removes the scheduled messages of the type",
    participantFields: { reads: ["messages"], writes: ["messages"] },
    args: [strArg("messageType", PARSE)],
    perform: (ctx, [type]) => keepItems(ctx, "messages", (m) => m.type !== type),
  },
  {
    name: "NOTIFY_RESEARCHER",
    summary: "effect notify-researcher with the type and key/value string pairs (a trailing unpaired key is ignored)",
    participantFields: { reads: ["participantId"], writes: [] },
    args: [strArg("messageType", PARSE)],
    rest: (i) =>
      i % 2 === 1
        ? strArg(`key${(i + 1) / 2}`, "could not parse key")
        : strArg(`value${i / 2}`, "could not parse value"),
    // an unpaired trailing key is not even evaluated
    evaluatedArgs: (n) => (n % 2 === 0 ? n - 1 : n),
    perform: (ctx, [type, ...pairs]) => {
      const payload: Record<string, string> = {};
      for (let i = 0; i + 1 < pairs.length; i += 2) setOwn(payload, pairs[i] as string, pairs[i + 1] as string);
      return addEffect(ctx, {
        kind: "notify-researcher",
        messageType: type as string,
        participantId: ctx.state.participantId,
        payload,
      });
    },
  },
  {
    name: "SEND_MESSAGE_NOW",
    summary:
      "effect send-message (template type, optional language) to the confidential participant id; payload: studyKey, flags.KEY, linkingCodes.KEY, eventData.KEY; fails if the study has no template for the type",
    participantFields: { reads: ["flags", "linkingCodes"], writes: [] },
    usesServices: true,
    args: [strArg("messageType", PARSE), optional(anyArg("languageOverride"))],
    precheck: (ctx) =>
      ctx.event.participantIDForConfidentialResponses ? null : "missing participantID for confidential responses",
    perform: async (ctx, [rawType, language]) => {
      const messageType = (rawType as string).trim();
      if (messageType === "") return reject(ctx, PARSE);
      const message: ImmediateMessage = {
        messageType,
        confidentialId: ctx.event.participantIDForConfidentialResponses as string,
        ...(typeof language === "string" && language !== "" ? { languageOverride: language } : {}),
        payload: messagePayload(ctx),
      };
      const effect: SideEffect = { kind: "send-message", ...message };
      // text the database cannot store is refused before the port sees it
      const problem = firstTextProblem(effect, "message");
      if (problem) return reject(ctx, problem);
      // As on the reference platform, a message the study cannot send fails the action: without a
      // template of its own it would show the participant's data the study never chose to show.
      const refusal = await ctx.services.refuseMessage(message);
      if (refusal !== null) return reject(ctx, refusal);
      ctx.effects = [...ctx.effects, effect];
      return true;
    },
  },
]);
