import { Option } from "commander";
import { z } from "zod";
import { getExplorerParticipant, listExplorerReports, listExplorerResponses } from "@studyflow/domain/data-explorer";
import { NotFound } from "@studyflow/domain/errors";
import { listRuleFailures } from "@studyflow/domain/events";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { fieldLines } from "../output";
import { studyKey, text, wholeNumber } from "../flag-values";
import { isoOfSeconds } from "./participants-list";

export interface ParticipantsShowInput {
  studyKey: string;
  participantId: string;
  /** How many of the most recent responses, reports and rule failures. */
  recent: number;
}

/** One participant as a researcher checks it: state, surveys, and what happened to it lately. */
export async function participantsShow(ctx: CliContext, input: ParticipantsShowInput) {
  const db = ctx.database.db;
  await requireStudy(db, input.studyKey);
  const row = await getExplorerParticipant(db, input.studyKey, input.participantId).catch((error: unknown) => {
    // the study exists (checked above): what is missing is the participant the flag names
    if (error instanceof NotFound)
      throw new NotFound(`no participant "${input.participantId}" in study "${input.studyKey}"`);
    throw error;
  });
  // The data explorer reads one survey's responses at a time (as case-backend's does): each survey
  // the participant submitted or has assigned, newest first, merged.
  const surveyKeys = [
    ...new Set([...Object.keys(row.lastSubmissions), ...row.assignedSurveys.map((survey) => survey.surveyKey)]),
  ];
  const byParticipant = { participantID: input.participantId };
  const recentPage = { page: 1, limit: input.recent };
  const responsePages = [];
  for (const surveyKey of surveyKeys) {
    responsePages.push(
      await listExplorerResponses(db, input.studyKey, surveyKey, {
        ...recentPage,
        filter: byParticipant,
        sort: { submittedAt: -1 },
      }),
    );
  }
  const responses = responsePages
    .flatMap((page) => page.rows)
    .sort((a, b) => b.submittedAt - a.submittedAt)
    .slice(0, input.recent)
    .map((response) => ({
      id: response.id,
      surveyKey: response.key,
      versionId: response.versionId,
      submittedAt: response.submittedAt,
      arrivedAt: response.arrivedAt,
    }));
  const reportRows = (
    await listExplorerReports(db, input.studyKey, recentPage, { participantId: input.participantId })
  ).rows.map((report) => ({ id: report.id, key: report.key, timestamp: report.timestamp, data: report.data }));
  const failures = await listRuleFailures(db, {
    studyKey: input.studyKey,
    participantId: input.participantId,
    limit: input.recent,
  });
  const participant = {
    participantId: row.participantId,
    studyStatus: row.studyStatus,
    enteredAt: row.enteredAt,
    modifiedAt: row.modifiedAt,
    flags: row.flags,
    assignedSurveys: row.assignedSurveys,
    lastSubmissions: row.lastSubmissions,
  };
  const ruleFailures = failures.map((failure) => ({
    occurredAt: failure.occurredAt.toISOString(),
    eventType: failure.eventType,
    eventKey: failure.eventKey,
    ruleIndex: failure.ruleIndex,
    path: failure.path,
    message: failure.message,
    outcome: failure.outcome,
  }));
  const data = { studyKey: input.studyKey, participant, responses, reports: reportRows, ruleFailures };
  const section = (title: string, lines: string[]) => [title, ...(lines.length === 0 ? ["  none"] : lines)];
  ctx.output.result(data, [
    `participant "${row.participantId}" of study "${input.studyKey}"`,
    ...fieldLines([
      ["status", row.studyStatus],
      ["entered", isoOfSeconds(row.enteredAt) ?? "-"],
      ["last change", isoOfSeconds(row.modifiedAt) ?? "-"],
    ]).map((line) => `  ${line}`),
    ...section(
      "flags",
      Object.entries(row.flags).map(([key, value]) => `  ${key} = ${value}`),
    ),
    ...section(
      "assigned surveys",
      row.assignedSurveys.map(
        (survey) =>
          `  ${survey.surveyKey}  from ${isoOfSeconds(survey.validFrom) ?? "any time"}  until ${isoOfSeconds(survey.validUntil) ?? "open"}`,
      ),
    ),
    ...section(
      "last submissions",
      Object.entries(row.lastSubmissions).map(([survey, at]) => `  ${survey}  ${isoOfSeconds(at) ?? "-"}`),
    ),
    ...section(
      `recent responses (at most ${input.recent})`,
      responses.map(
        (response) =>
          `  ${isoOfSeconds(response.submittedAt) ?? "-"}  ${response.surveyKey}  version ${response.versionId || "-"}  ${response.id}`,
      ),
    ),
    ...section(
      `recent reports (at most ${input.recent})`,
      reportRows.map(
        (report) =>
          `  ${isoOfSeconds(report.timestamp) ?? "-"}  ${report.key}  ${report.data.map((entry) => `${entry.key}=${entry.value}`).join(",")}`,
      ),
    ),
    ...section(
      `recent rule failures (at most ${input.recent})`,
      ruleFailures.map(
        (failure) =>
          `  ${failure.occurredAt}  ${failure.eventType}${failure.eventKey ? `(${failure.eventKey})` : ""}  rule ${failure.ruleIndex}  ${failure.path}: ${failure.message}`,
      ),
    ),
  ]);
  return data;
}

export const participantsShowCommand = defineCommand({
  name: "participants:show",
  summary:
    "show one participant: state, assigned surveys, last submissions, recent responses, reports and rule failures",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--participant <ID>", "participant id").makeOptionMandatory(),
    new Option("--recent <N>", "how many recent responses, reports and rule failures (default 5)"),
  ],
  values: z
    .object({ study: studyKey, participant: text, recent: wholeNumber(1, 100).optional() })
    .transform((values): ParticipantsShowInput => ({
      studyKey: values.study,
      participantId: values.participant,
      recent: values.recent ?? 5,
    })),
  uses: "database",
  run: participantsShow,
});
