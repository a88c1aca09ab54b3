import { Option } from "commander";
import { z } from "zod";
import { createParticipantExportTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import { jsonObject, studyKey, switchFlag } from "../flag-values";
import { OPERATOR, startExport, startFlags, startValues, type ExportContext, type StartOptions } from "./export-task";

export interface ExportParticipantsInput extends StartOptions {
  filter?: Record<string, unknown> | undefined;
  sort?: Record<string, unknown> | undefined;
  gzip: boolean;
}

export async function exportParticipants(ctx: ExportContext, input: ExportParticipantsInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  return startExport(ctx, input, () =>
    createParticipantExportTask(
      ctx.database.db,
      input.studyKey,
      {
        ...(input.filter === undefined ? {} : { filter: input.filter }),
        ...(input.sort === undefined ? {} : { sort: input.sort }),
        gzip: input.gzip,
      },
      OPERATOR.subject,
    ),
  );
}

export const exportParticipantsCommand = defineCommand({
  name: "export:participants",
  summary: "export a study's participant states (JSON, as CASE writes them), follow it and download the file",
  flags: () => [
    new Option("--study <KEY>", "study key").makeOptionMandatory(),
    new Option(
      "--filter <JSON>",
      'only the participants this Mongo-style filter matches, e.g. \'{"studyStatus": "active"}\'',
    ),
    new Option("--sort <JSON>", "row order, e.g. '{\"enteredAt\": -1}'"),
    new Option("--gzip", "store and download the file gzip-compressed"),
    ...startFlags(),
  ],
  values: z
    .object({
      study: studyKey,
      filter: jsonObject.optional(),
      sort: jsonObject.optional(),
      gzip: switchFlag,
      ...startValues,
    })
    .transform((values): ExportParticipantsInput => ({
      studyKey: values.study,
      filter: values.filter,
      sort: values.sort,
      gzip: values.gzip,
      out: values.out,
      wait: values.wait,
      cancelOnInterrupt: values.cancelOnInterrupt,
    })),
  uses: "database",
  run: exportParticipants,
});
