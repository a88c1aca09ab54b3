import { createWriteStream } from "node:fs";
import { access, rename, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { Option } from "commander";
import { z } from "zod";
import { Conflict } from "@studyflow/domain/errors";
import { createFileStore } from "@studyflow/domain/files";
import { openParticipantFile } from "@studyflow/domain/participant-files";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey, text } from "../flag-values";

export interface ParticipantFilesGetInput {
  studyKey: string;
  fileId: string;
  out?: string;
}

/**
 * Writes one participant file to `--out` (default: its stored name, `<id>.<ext>`, in this
 * directory). Written under a temporary name and renamed when complete, so an interrupted fetch
 * never leaves a file that looks whole; the default name never overwrites a file.
 */
export async function participantFilesGet(ctx: CliContext, input: ParticipantFilesGetInput) {
  const db = ctx.database.db;
  // the store the API writes uploads to, configured as the API's is
  const store = createFileStore(db, { backend: ctx.config.EXPORT_FILE_STORE, directory: ctx.config.RESULT_DIR });
  const opened = await openParticipantFile(db, store, input.studyKey, input.fileId);
  const target = resolve(ctx.workingDirectory, input.out ?? opened.fileName);
  const partial = `${target}.part-${process.pid}`;
  try {
    if (input.out === undefined) await refuseExisting(target);
    await pipeline(opened.body, createWriteStream(partial, { flags: "wx" }));
    await rename(partial, target);
  } catch (error) {
    opened.body.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  const data = {
    studyKey: input.studyKey,
    id: opened.file.id,
    participantId: opened.file.participantId,
    fileType: opened.file.fileType,
    size: opened.file.size,
    path: target,
  };
  ctx.output.result(data, [
    `file ${opened.file.id} (${opened.file.fileType}, ${opened.file.size} bytes) written to ${target}`,
  ]);
  return data;
}

async function refuseExisting(target: string): Promise<void> {
  const exists = await access(target).then(
    () => true,
    () => false,
  );
  if (exists) throw new Conflict(`${target} exists; name another with --out`);
}

export const participantFilesGetCommand = defineCommand({
  name: "participant-files:get",
  summary: "write one participant file to disk",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option("--file <ID>", "the file's id (from participant-files:list)").makeOptionMandatory(),
    new Option("--out <FILE>", "where to write it (default: <id>.<ext> in this directory)"),
  ],
  values: z
    .object({ study: studyKey, file: text, out: text.optional() })
    .transform((values): ParticipantFilesGetInput => ({
      studyKey: values.study,
      fileId: values.file,
      ...(values.out === undefined ? {} : { out: values.out }),
    })),
  uses: "database",
  run: participantFilesGet,
});
