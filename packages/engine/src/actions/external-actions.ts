// EXTERNAL_EVENT_HANDLER: lets an external service see the event and, optionally, return a new
// participant state and reports. The reference could never apply either (it crashed on the state).
import type { EvalContext } from "../eval-context";
import { firstTextProblem } from "../text-values";
import { nowSeconds, reject } from "../eval-context";
import { actionFamily, optional, strArg } from "../function-spec";
import { externalEventBody, externalRoute } from "../external-event";
import { normalizeParticipantState, participantStateProblem } from "../participant-state";
import { replaceState } from "../state-writes";
import type { ParticipantState, Report, ReportData } from "../types";

const PARSE = "could not parse arguments";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toReportData(value: unknown): ReportData | null {
  if (!isRecord(value) || typeof value["key"] !== "string" || typeof value["value"] !== "string") return null;
  const dtype = value["dtype"];
  if (dtype !== undefined && dtype !== null && typeof dtype !== "string") return null;
  return { key: value["key"], value: value["value"], ...(typeof dtype === "string" && dtype !== "" ? { dtype } : {}) };
}

function toReport(ctx: EvalContext, value: unknown, fallbackKey?: string): Report | null {
  if (!isRecord(value)) return null;
  const key = typeof value["key"] === "string" && value["key"] !== "" ? value["key"] : fallbackKey;
  const rawData = value["data"] ?? [];
  if (key === undefined || !Array.isArray(rawData)) return null;
  const data = rawData.map(toReportData);
  if (data.some((d) => d === null)) return null;
  const timestamp = value["timestamp"];
  return {
    key,
    participantId: ctx.state.participantId,
    timestamp: typeof timestamp === "number" && Number.isFinite(timestamp) ? Math.trunc(timestamp) : nowSeconds(ctx),
    data: data as ReportData[],
  };
}

/** Reports as a list, or as a map from report key to report (both shapes occur in the reference). */
function toReports(ctx: EvalContext, value: unknown): Report[] | null {
  let entries: Array<[unknown, string | undefined]>;
  if (Array.isArray(value)) entries = value.map((r) => [r, undefined]);
  else if (isRecord(value)) entries = Object.entries(value).map(([k, r]) => [r, k]);
  else return null;
  const reports = entries.map(([r, key]) => toReport(ctx, r, key));
  return reports.some((r) => r === null) ? null : (reports as Report[]);
}

function applyReply(ctx: EvalContext, reply: unknown): boolean {
  if (!isRecord(reply)) return true;
  let nextState: ParticipantState | undefined;
  if (reply["pState"] !== undefined && reply["pState"] !== null) {
    const candidate = reply["pState"];
    const problem = participantStateProblem(candidate);
    if (problem) return reject(ctx, `returned participant state is invalid: ${problem}`);
    const returned = candidate as Partial<ParticipantState>;
    if (returned.participantId !== undefined && returned.participantId !== ctx.state.participantId) {
      return reject(ctx, "returned participant state belongs to another participant");
    }
    nextState = normalizeParticipantState({ ...returned, participantId: ctx.state.participantId });
  }
  let reports: Report[] | undefined;
  if (reply["reportsToCreate"] !== undefined && reply["reportsToCreate"] !== null) {
    const parsed = toReports(ctx, reply["reportsToCreate"]);
    if (!parsed) return reject(ctx, "returned reportsToCreate is not a list of reports");
    reports = parsed;
  }
  const unstorable = firstTextProblem({ pState: nextState, reportsToCreate: reports }, "reply");
  if (unstorable) return reject(ctx, unstorable);
  // both parts are checked before either is applied, so a bad reply changes nothing
  if (nextState) replaceState(ctx, nextState);
  if (reports) ctx.reports = [...reports, ...ctx.reports];
  return true;
}

export const externalActions = actionFamily("external", [
  {
    name: "EXTERNAL_EVENT_HANDLER",
    summary:
      "posts the event to the service; a reply's pState (if valid, same participant) replaces the state, its reportsToCreate are added",
    // the whole state is posted, and a reply's pState replaces it
    participantFields: { reads: "all", writes: "all" },
    usesServices: true,
    args: [strArg("serviceName", PARSE), optional(strArg("route", PARSE))],
    perform: async (ctx, [serviceName, route]) => {
      const reply = await ctx.services.callExternalService(
        serviceName as string,
        externalRoute(route),
        externalEventBody(ctx),
      );
      return applyReply(ctx, reply);
    },
  },
]);
