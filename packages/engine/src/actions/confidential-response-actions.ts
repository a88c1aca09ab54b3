// Deleting confidential responses is returned as an effect; it needs the event's confidential id.
import type { EvalContext } from "../eval-context";
import { reject } from "../eval-context";
import { NO_PARTICIPANT_FIELDS, actionFamily, anyArg, strArg } from "../function-spec";
import { addEffect } from "./message-actions";

const MISSING_ID = "missing participantID for confidential responses";

function removeConfidential(ctx: EvalContext, key?: string): boolean {
  const confidentialId = ctx.event.participantIDForConfidentialResponses;
  if (!confidentialId) return reject(ctx, MISSING_ID);
  return addEffect(ctx, {
    kind: "remove-confidential-responses",
    confidentialId,
    ...(key !== undefined ? { key } : {}),
  });
}

export const confidentialResponseActions = actionFamily("confidential responses", [
  {
    name: "REMOVE_CONFIDENTIAL_RESPONSE_BY_KEY",
    summary: "effect remove-confidential-responses for one key; needs the confidential participant id",
    participantFields: NO_PARTICIPANT_FIELDS,
    args: [strArg("key", "could not parse arguments")],
    perform: (ctx, [key]) => removeConfidential(ctx, key as string),
  },
  {
    name: "REMOVE_ALL_CONFIDENTIAL_RESPONSES",
    summary:
      "effect remove-confidential-responses for all keys; needs the confidential participant id; arguments are ignored",
    participantFields: NO_PARTICIPANT_FIELDS,
    rest: (i) => anyArg(`ignored${i}`, { optional: true }),
    evaluatedArgs: () => 0,
    perform: (ctx) => removeConfidential(ctx),
  },
]);
