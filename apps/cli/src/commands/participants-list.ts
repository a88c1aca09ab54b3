import { Option } from "commander";
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { participants } from "@studyflow/db";
import { translateCaseFilter, translateCaseSort } from "@studyflow/domain";
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
 * data explorer does (the same Mongo-style filter translation as the API's routes).
 */
export async function participantsList(ctx: CliContext, input: ParticipantsListInput) {
  const db = ctx.database.db;
  await requireStudy(db, input.studyKey);
  // Both translations throw Invalid naming the field, before any row is read.
  const where = and(eq(participants.studyKey, input.studyKey), translateCaseFilter("participants", input.filter));
  const order = translateCaseSort("participants", input.sort).map((key) =>
    key.direction === "asc" ? asc(sql.identifier(key.column)) : desc(sql.identifier(key.column)),
  );
  const [total] = await db.select({ n: count() }).from(participants).where(where);
  const totalCount = total?.n ?? 0;
  const rows = await db
    .select()
    .from(participants)
    .where(where)
    // the participant id last, so that a page is the same on every read whatever the sort's ties
    .orderBy(...order, asc(participants.participantId))
    .limit(input.limit)
    .offset((input.page - 1) * input.limit);
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
    pagination: { totalCount, currentPage: input.page, totalPages, pageSize: input.limit },
  };
  const flagsOf = (flags: Record<string, string>) =>
    Object.entries(flags)
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
  ctx.output.result(data, [
    `${totalCount} participant${totalCount === 1 ? "" : "s"} in study "${input.studyKey}"${
      input.filter ? " match the filter" : ""
    }; page ${input.page} of ${Math.max(totalPages, 1)}`,
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
