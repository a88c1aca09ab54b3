import { Option } from "commander";
import { z } from "zod";
import { MAX_PAGE_SIZE, listAuditLog } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey, text, wholeNumber } from "../flag-values";

const DEFAULT_LIMIT = 50;

export interface AuditLogListInput {
  studyKey: string;
  limit: number;
  cursor?: string;
}

export async function auditLogList(ctx: CliContext, input: AuditLogListInput) {
  const page = await listAuditLog(ctx.database.db, input.studyKey, {
    limit: input.limit,
    ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
  });
  const data = { studyKey: input.studyKey, entries: page.items, nextCursor: page.nextCursor };
  ctx.output.result(data, [
    `${page.items.length} change${page.items.length === 1 ? "" : "s"} to study "${input.studyKey}" (newest first)`,
    ...page.items.map(
      (e) =>
        `${e.at.toISOString()}  ${e.actor}  ${e.action}${e.target === null ? "" : ` ${e.target}`}  ${JSON.stringify(e.details)}`,
    ),
    ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : []),
  ]);
  return data;
}

export const auditLogListCommand = defineCommand({
  name: "audit-log:list",
  summary: "who changed what in a study's configuration, and when; newest first",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--limit <N>", `entries per page (default ${DEFAULT_LIMIT}, at most ${MAX_PAGE_SIZE})`),
    new Option("--cursor <CURSOR>", "where the previous page ended (its nextCursor)"),
  ],
  values: z
    .object({ study: studyKey, limit: wholeNumber(1, MAX_PAGE_SIZE).optional(), cursor: text.optional() })
    .transform(({ study, limit, cursor }): AuditLogListInput => ({
      studyKey: study,
      limit: limit ?? DEFAULT_LIMIT,
      ...(cursor === undefined ? {} : { cursor }),
    })),
  uses: "database",
  run: auditLogList,
});
