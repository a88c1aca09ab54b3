import { Option } from "commander";
import { z } from "zod";
import { Invalid } from "@studyflow/domain/errors";
import { addStudyCodes, codeProblem, countStudyCodes } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY, readOperatorFile } from "../command-support";
import { UsageError } from "../failures";
import { studyKey, text } from "../flag-values";
import { fieldLines } from "../output";

/** Skipped codes a person is shown; --json lists them all. */
const SHOWN_SKIPPED = 10;

export interface CodeListAddInput {
  studyKey: string;
  listKey: string;
  /** Given with --code. */
  codes?: string[];
  /** Given with --file: one code per line. */
  file?: string;
}

/** The codes of a file, one per line: surrounding spaces removed, blank lines skipped, problems named by line. */
async function readCodesFile(ctx: CliContext, file: string): Promise<string[]> {
  const content = await readOperatorFile(ctx, file, "codes file");
  const codes: string[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    const code = line.trim();
    if (code === "") return;
    const problem = codeProblem(code);
    if (problem) throw new Invalid(`${file} line ${index + 1}: the code ${problem}`);
    codes.push(code);
  });
  if (codes.length === 0) throw new Invalid(`${file} holds no codes (one code per line)`);
  return codes;
}

export async function codeListAdd(ctx: CliContext, input: CodeListAddInput) {
  const codes = input.file === undefined ? (input.codes ?? []) : await readCodesFile(ctx, input.file);
  // the whole file in one transaction: an import either happens or it does not
  const { added, skipped } = await addStudyCodes(ctx.database.db, input.studyKey, input.listKey, codes, UPLOADED_BY);
  const codeCount = await countStudyCodes(ctx.database.db, input.studyKey, input.listKey);
  const data = { studyKey: input.studyKey, listKey: input.listKey, added, skipped, codeCount };
  const shown = skipped.slice(0, SHOWN_SKIPPED).join(", ");
  const more = skipped.length > SHOWN_SKIPPED ? ` and ${skipped.length - SHOWN_SKIPPED} more` : "";
  ctx.output.result(data, [
    `${added} code${added === 1 ? "" : "s"} added to list "${input.listKey}" of study "${input.studyKey}"`,
    ...fieldLines([
      ["skipped", skipped.length > 0 ? `${shown}${more} (already in the list or given twice)` : undefined],
      ["codes in list", codeCount],
    ]),
  ]);
  return data;
}

export const codeListAddCommand = defineCommand({
  name: "code-list:add",
  summary: "add codes to a study code list, one with --code or one per line of a file; codes present are skipped",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--list <LIST>", "code list key, e.g. kit-codes").makeOptionMandatory(),
    new Option("--code <CODE>", "a code to add; repeat for more").argParser((value: string, previous?: string[]) => [
      ...(previous ?? []),
      value,
    ]),
    new Option("--file <PATH>", "a text file with one code per line (blank lines are skipped)"),
  ],
  values: z
    .object({
      study: studyKey,
      list: studyKey,
      code: z.array(z.string().transform((code) => code.trim())).optional(),
      file: text.optional(),
    })
    .transform(({ study, list, code, file }): CodeListAddInput => {
      if ((code === undefined) === (file === undefined)) throw new UsageError("give --code or --file (one of them)");
      return {
        studyKey: study,
        listKey: list,
        ...(code === undefined ? {} : { codes: code }),
        ...(file ? { file } : {}),
      };
    }),
  uses: "database",
  run: codeListAdd,
});
