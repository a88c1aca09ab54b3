import { Option } from "commander";
import { z } from "zod";
import { listParticipantFiles } from "@studyflow/domain/participant-files";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { studyKey, text, wholeNumber } from "../flag-values";

export interface ParticipantFilesListInput {
  studyKey: string;
  participantId?: string;
  page: number;
  limit: number;
}

/** A page of a study's participant files, newest first, for a researcher to find one to fetch. */
export async function participantFilesList(ctx: CliContext, input: ParticipantFilesListInput) {
  const db = ctx.database.db;
  await requireStudy(db, input.studyKey);
  const { files, totalCount } = await listParticipantFiles(
    db,
    input.studyKey,
    { page: input.page, limit: input.limit },
    input.participantId,
  );
  const data = {
    studyKey: input.studyKey,
    totalCount,
    files: files.map((file) => ({
      id: file.id,
      participantId: file.participantId,
      fileType: file.fileType,
      size: file.size,
      createdAt: file.createdAt.toISOString(),
    })),
  };
  const whose = input.participantId === undefined ? "" : ` of participant "${input.participantId}"`;
  ctx.output.result(data, [
    `${totalCount} file${totalCount === 1 ? "" : "s"}${whose} in study "${input.studyKey}"`,
    ...data.files.map(
      (file) =>
        `  ${file.createdAt}  ${file.id}  ${file.fileType}  ${file.size} bytes  participant ${file.participantId}`,
    ),
  ]);
  return data;
}

export const participantFilesListCommand = defineCommand({
  name: "participant-files:list",
  summary: "list a study's participant files (uploads), newest first",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--participant <ID>", "only this participant's files"),
    new Option("--page <N>", "page number (default 1)"),
    new Option("--limit <N>", "files per page (default 50)"),
  ],
  values: z
    .object({
      study: studyKey,
      participant: text.optional(),
      page: wholeNumber(1, 1_000_000).optional(),
      limit: wholeNumber(1, 1_000).optional(),
    })
    .transform((values): ParticipantFilesListInput => ({
      studyKey: values.study,
      ...(values.participant === undefined ? {} : { participantId: values.participant }),
      page: values.page ?? 1,
      limit: values.limit ?? 50,
    })),
  uses: "database",
  run: participantFilesList,
});
