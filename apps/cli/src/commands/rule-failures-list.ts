import { Option } from "commander";
import { z } from "zod";
import { listRuleFailures, type RuleFailureQuery } from "@studyflow/domain/events";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { oneOf, studyKey, text, wholeNumber } from "../flag-values";

const EVENT_TYPES = ["ENTER", "SUBMIT", "LEAVE", "MERGE", "CUSTOM", "TIMER"] as const;

export async function ruleFailuresList(ctx: CliContext, query: RuleFailureQuery) {
  await requireStudy(ctx.database.db, query.studyKey);
  const rows = await listRuleFailures(ctx.database.db, query);
  // the stored rows as they are (their study is the one asked for); --json prints dates as ISO 8601
  const ruleFailures = rows.map(({ studyKey: _study, ...failure }) => failure);
  const data = { studyKey: query.studyKey, ruleFailures };
  ctx.output.result(data, [
    `${ruleFailures.length} rule failure${ruleFailures.length === 1 ? "" : "s"} in study "${query.studyKey}" (most recent first)`,
    ...ruleFailures.map(
      (f) =>
        `${f.occurredAt.toISOString()}  ${f.eventType}${f.eventKey ? `(${f.eventKey})` : ""}  ${f.participantId}  ${f.outcome}  ${f.path}: ${f.message}`,
    ),
  ]);
  return data;
}

export const ruleFailuresListCommand = defineCommand({
  name: "rule-failures:list",
  summary: "list the rules that failed for a study's participants, most recent first",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--participant <ID>", "only this participant"),
    new Option("--event-type <TYPE>", `only this event type: ${EVENT_TYPES.join(", ")}`),
    new Option("--since <ISO>", "only failures at or after this date-time, e.g. 2026-11-01T00:00:00Z"),
    new Option("--limit <N>", "at most this many (default 50)"),
  ],
  values: z
    .object({
      study: studyKey,
      participant: text.optional(),
      eventType: oneOf(EVENT_TYPES).optional(),
      since: text.refine((value) => !Number.isNaN(Date.parse(value)), "must be an ISO 8601 date-time").optional(),
      limit: wholeNumber(1, 10_000).optional(),
    })
    .transform(({ study, participant, eventType, since, limit }): RuleFailureQuery => ({
      studyKey: study,
      ...(participant === undefined ? {} : { participantId: participant }),
      ...(eventType === undefined ? {} : { eventType }),
      ...(since === undefined ? {} : { since: new Date(since) }),
      limit: limit ?? 50,
    })),
  uses: "database",
  run: ruleFailuresList,
});
