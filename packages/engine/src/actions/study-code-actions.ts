// Study code lists behind the service port.
import { NO_PARTICIPANT_FIELDS, actionFamily, optional, strArg } from "../function-spec";
import { deleteEntry, setEntry } from "../state-writes";

const PARSE = "could not parse arguments";

export const studyCodeActions = actionFamily("study codes", [
  {
    name: "REMOVE_STUDY_CODE",
    summary: "deletes the code from the list",
    participantFields: NO_PARTICIPANT_FIELDS,
    usesServices: true,
    args: [strArg("listKey", PARSE), strArg("code", PARSE)],
    perform: async (ctx, [listKey, code]) => {
      await ctx.services.removeCode(listKey as string, code as string);
      return true;
    },
  },
  {
    name: "DRAW_STUDY_CODE_AS_LINKING_CODE",
    summary:
      "draws (removes) a code from the list into linkingCodes[key] (key defaults to listKey); an empty list removes the linking code",
    participantFields: { reads: ["linkingCodes"], writes: ["linkingCodes"] },
    usesServices: true,
    args: [strArg("listKey", PARSE), optional(strArg("linkingCodeKey", PARSE))],
    perform: async (ctx, args) => {
      const listKey = args[0] as string;
      const key = args.length > 1 ? (args[1] as string) : listKey;
      const code = await ctx.services.drawCode(listKey);
      return typeof code === "string" && code !== ""
        ? setEntry(ctx, "linkingCodes", key, code)
        : deleteEntry(ctx, "linkingCodes", key);
    },
  },
]);
