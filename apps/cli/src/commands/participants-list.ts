import { Option } from "commander";
import { z } from "zod";
import { listExplorerParticipants } from "@studyflow/domain/data-explorer";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { jsonObject, studyKey, wholeNumber } from "../flag-values";

export interface ParticipantsListInput {
  studyKey: string;
  filter?: Record<string, unknown> | undefined;
  sort?: Record<string, unknown> | undefined;
  page: number;
  limit: number;
}

/** Unix seconds as ISO 8601; 0 (never) as null. */
export const isoOfSeconds = (seconds: number) => (seconds > 0 ? new Date(seconds * 1000).toISOString() : null);

/**
 * A page of a study's participants in CASE's page/limit terms, filtered and sorted as case-admin's
 * data explorer does, through the same domain read as the API's data-explorer route.
 */
export async function participantsList(ctx: CliContext, input: ParticipantsListInput) {
  const db = ctx.database.db;
  await requireStudy(db, input.studyKey);
  // The data explorer's own read: the filter and sort translated (Invalid naming the field before
  // anything is read), counted and paged as case-backend pages.
  const page = await listExplorerParticipants(db, input.studyKey, {
    ...(input.filter === undefined ? {} : { filter: input.filter }),
    ...(input.sort === undefined ? {} : { sort: input.sort }),
    page: input.page,
    limit: input.limit,
  });
  const rows = page.rows;
  const totalCount = page.totalCount;
  const list = rows.map((row) => ({
    participantId: row.participantId,
    studyStatus: row.studyStatus,
    enteredAt: row.enteredAt,
    modifiedAt: row.modifiedAt,
    flags: row.flags,
    assignedSurveys: row.assignedSurveys.map((survey) => survey.surveyKey),
    lastSubmissions: row.lastSubmissions,
  }));
  const totalPages = Math.ceil(totalCount / input.limit);
  const data = {
    studyKey: input.studyKey,
    participants: list,
    pagination: { totalCount, currentPage: page.page, totalPages, pageSize: input.limit },
  };
  const flagsOf = (flags: Record<string, string>) =>
    Object.entries(flags)
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
  ctx.output.result(data, [
    `${totalCount} participant${totalCount === 1 ? "" : "s"} in study "${input.studyKey}"${
      input.filter ? " match the filter" : ""
    }; page ${page.page} of ${Math.max(totalPages, 1)}`,
    ...list.map((p) =>
      [p.participantId, p.studyStatus, isoOfSeconds(p.enteredAt) ?? "-", flagsOf(p.flags) || "-"].join("  "),
    ),
  ]);
  return data;
}

export const participantsListCommand = defineCommand({
  name: "participants:list",
  summary: "list a study's participants a page at a time, filtered and sorted as case-admin's data explorer does",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--filter <JSON>", 'Mongo-style filter, e.g. \'{"studyStatus": "active", "flags.consent": "yes"}\''),
    new Option("--sort <JSON>", "e.g. '{\"enteredAt\": -1}' (default: by participant id)"),
    new Option("--page <N>", "page number, from 1 (default 1)"),
    new Option("--limit <N>", "participants per page (default 20)"),
  ],
  values: z
    .object({
      study: studyKey,
      filter: jsonObject.optional(),
      sort: jsonObject.optional(),
      page: wholeNumber(1, 1_000_000).optional(),
      limit: wholeNumber(1, 1_000).optional(),
    })
    .transform((values): ParticipantsListInput => ({
      studyKey: values.study,
      filter: values.filter,
      sort: values.sort,
      page: values.page ?? 1,
      limit: values.limit ?? 20,
    })),
  uses: "database",
  run: participantsList,
});
