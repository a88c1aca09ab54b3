import { Option } from "commander";
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, listStudyCodeLists, listStudyCodes } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey, text, wholeNumber } from "../flag-values";
import { fieldLines } from "../output";

export interface CodeListListInput {
  studyKey: string;
  /** Absent: the study's lists with their sizes; given: a page of this list's codes. */
  listKey?: string;
  limit: number;
  cursor?: string;
}

export async function codeListList(ctx: CliContext, input: CodeListListInput) {
  const db = ctx.database.db;
  if (input.listKey === undefined) {
    const codeLists = await listStudyCodeLists(db, input.studyKey);
    const data = { studyKey: input.studyKey, codeLists };
    ctx.output.result(data, [
      `${codeLists.length} code list${codeLists.length === 1 ? "" : "s"} in study "${input.studyKey}"`,
      ...fieldLines(codeLists.map((list) => [list.listKey, `${list.codeCount} codes`] as const)),
    ]);
    return data;
  }
  const page = await listStudyCodes(db, input.studyKey, input.listKey, {
    limit: input.limit,
    ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
  });
  const data = { studyKey: input.studyKey, listKey: input.listKey, codes: page.items, nextCursor: page.nextCursor };
  ctx.output.result(data, [
    `${page.items.length} code${page.items.length === 1 ? "" : "s"} of list "${input.listKey}" (in code order)`,
    ...page.items.map((item) => item.code),
    ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : []),
  ]);
  return data;
}

export const codeListListCommand = defineCommand({
  name: "code-list:list",
  summary: "list a study's code lists with their sizes, or with --list a page of one list's codes",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--list <LIST>", "list this code list's codes"),
    new Option("--limit <N>", `codes per page (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})`),
    new Option("--cursor <CURSOR>", "where the previous page ended (its nextCursor)"),
  ],
  values: z
    .object({
      study: studyKey,
      list: studyKey.optional(),
      limit: wholeNumber(1, MAX_PAGE_SIZE).optional(),
      cursor: text.optional(),
    })
    .transform(({ study, list, limit, cursor }): CodeListListInput => ({
      studyKey: study,
      ...(list === undefined ? {} : { listKey: list }),
      limit: limit ?? DEFAULT_PAGE_SIZE,
      ...(cursor === undefined ? {} : { cursor }),
    })),
  uses: "database",
  run: codeListList,
});
