// What the event itself carries: its type and key, the submitted response's key, the CUSTOM payload.
import type { EvalContext } from "../eval-context";
import { BATCH_CONSTANT, NO_PARTICIPANT_FIELDS, anyArg, expressionFamily, strArg } from "../function-spec";

const CAST = "could not cast arguments";

function payloadOf(ctx: EvalContext): Record<string, unknown> | undefined {
  const payload = ctx.event.payload;
  return payload !== null && typeof payload === "object" ? payload : undefined;
}

function payloadEntry(ctx: EvalContext, key: string): { found: boolean; value: unknown } {
  const payload = payloadOf(ctx);
  if (!payload || !Object.hasOwn(payload, key)) return { found: false, value: undefined };
  return { found: true, value: payload[key] };
}

export const eventExpressions = expressionFamily("event", [
  {
    name: "checkEventType",
    summary: "the event's type equals the argument (ENTER, SUBMIT, LEAVE, MERGE, CUSTOM, TIMER)",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("eventType", CAST)],
    evaluate: (ctx, [type]) => ctx.event.type === type,
  },
  {
    name: "checkEventKey",
    summary: "the event's key (CUSTOM events) equals the argument",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("eventKey", CAST)],
    evaluate: (ctx, [key]) => (ctx.event.eventKey ?? "") === key,
  },
  {
    name: "checkSurveyResponseKey",
    summary: "the submitted response's survey key equals the argument",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("surveyKey", CAST)],
    evaluate: (ctx, [key]) => (ctx.event.response?.key ?? "") === key,
  },
  {
    name: "hasEventPayload",
    summary: "the event payload has at least one key; arguments are ignored",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    rest: (i) => anyArg(`ignored${i}`, { optional: true }),
    minArgs: 0,
    evaluatedArgs: () => 0,
    evaluate: (ctx) => {
      const payload = payloadOf(ctx);
      if (!payload) return false;
      for (const key in payload) if (Object.hasOwn(payload, key)) return true;
      return false;
    },
  },
  {
    name: "getEventPayloadValueAsStr",
    summary: 'payload[key] if it is a string, else ""',
    returns: "str",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("key")],
    evaluate: (ctx, [key]) => {
      const { value } = payloadEntry(ctx, key as string);
      return typeof value === "string" ? value : "";
    },
  },
  {
    name: "getEventPayloadValueAsNum",
    summary: "payload[key] if it is a number, else 0",
    returns: "num",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("key")],
    evaluate: (ctx, [key]) => {
      const { value } = payloadEntry(ctx, key as string);
      return typeof value === "number" ? value : 0;
    },
  },
  {
    name: "hasEventPayloadKey",
    summary: "the payload has the key",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("key")],
    evaluate: (ctx, [key]) => payloadEntry(ctx, key as string).found,
  },
  {
    name: "hasEventPayloadKeyWithValue",
    summary: "payload[key] is a string equal to value",
    returns: "bool",
    participantFields: NO_PARTICIPANT_FIELDS,
    prefilter: BATCH_CONSTANT,
    args: [strArg("key"), strArg("value")],
    evaluate: (ctx, [key, value]) => payloadEntry(ctx, key as string).value === value,
  },
]);
