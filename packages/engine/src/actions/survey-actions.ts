// Assigned surveys.
import { reject } from "../eval-context";
import { finiteTimestamp } from "../finite-numbers";
import { actionFamily, anyArg, strArg } from "../function-spec";
import { appendItem, keepItems, replaceContainer } from "../state-writes";
import { textProblem } from "../text-values";

const PARSE = "could not parse arguments";
const POSITIONS = ["first", "last"] as const;

/**
 * Whole seconds (truncated), or the failure message for a number that is not a finite safe integer
 * once truncated; a non-number silently becomes 0, as in the reference.
 */
const seconds = (v: unknown, what: string): number | string => (typeof v === "number" ? finiteTimestamp(v, what) : 0);

export const surveyActions = actionFamily("survey", [
  {
    name: "ADD_NEW_SURVEY",
    summary:
      "appends {surveyKey, validFrom, validUntil, category}; times truncated to whole seconds (non-numbers become 0; non-finite or beyond ±(2^53 − 1) is an error); duplicates allowed",
    participantFields: { reads: ["assignedSurveys"], writes: ["assignedSurveys"] },
    args: [strArg("surveyKey", PARSE), anyArg("validFrom"), anyArg("validUntil"), strArg("category", PARSE)],
    bulkWrite: ([surveyKey, from, until, category]) => {
      const validFrom = seconds(from, "validFrom");
      const validUntil = seconds(until, "validUntil");
      if (typeof surveyKey !== "string" || typeof category !== "string") return null;
      if (typeof validFrom === "string" || typeof validUntil === "string") return null;
      if (textProblem(surveyKey) !== null || textProblem(category) !== null) return null;
      return { kind: "add-survey", survey: { surveyKey, validFrom, validUntil, category } };
    },
    perform: (ctx, [surveyKey, from, until, category]) => {
      const validFrom = seconds(from, "validFrom");
      if (typeof validFrom === "string") return reject(ctx, validFrom);
      const validUntil = seconds(until, "validUntil");
      if (typeof validUntil === "string") return reject(ctx, validUntil);
      return appendItem(ctx, "assignedSurveys", {
        surveyKey: surveyKey as string,
        validFrom,
        validUntil,
        category: category as string,
      });
    },
  },
  {
    name: "REMOVE_ALL_SURVEYS",
    summary: "assignedSurveys = [] (takes no arguments)",
    participantFields: { reads: [], writes: ["assignedSurveys"] },
    bulkWrite: () => ({ kind: "remove-surveys" }),
    perform: (ctx) => replaceContainer(ctx, "assignedSurveys", []),
  },
  {
    name: "REMOVE_SURVEY_BY_KEY",
    summary: 'removes the "first" or "last" assignment with the key',
    participantFields: { reads: ["assignedSurveys"], writes: ["assignedSurveys"] },
    args: [strArg("surveyKey", PARSE), strArg("position", PARSE, { oneOf: POSITIONS })],
    perform: (ctx, [surveyKey, position]) => {
      const surveys = ctx.state.assignedSurveys;
      let index: number;
      if (position === "first") index = surveys.findIndex((s) => s.surveyKey === surveyKey);
      else if (position === "last") index = surveys.findLastIndex((s) => s.surveyKey === surveyKey);
      else return reject(ctx, "position not known");
      return index < 0 ? true : keepItems(ctx, "assignedSurveys", (_, i) => i !== index);
    },
  },
  {
    name: "REMOVE_SURVEYS_BY_KEY",
    summary: "removes every assignment with the key",
    participantFields: { reads: ["assignedSurveys"], writes: ["assignedSurveys"] },
    args: [strArg("surveyKey", PARSE)],
    bulkWrite: ([surveyKey]) =>
      typeof surveyKey === "string" && textProblem(surveyKey) === null ? { kind: "remove-surveys", surveyKey } : null,
    perform: (ctx, [surveyKey]) => keepItems(ctx, "assignedSurveys", (s) => s.surveyKey !== surveyKey),
  },
]);
