import { z } from "zod";
import { createParticipantExportTask } from "@studyflow/domain";
import { defineCommand } from "../command-definition";
import { requireStudy } from "../command-support";
import {
  OPERATOR,
  selectionFlags,
  selectionRequest,
  selectionValues,
  startExport,
  startFlags,
  startInput,
  startValues,
  studyFlag,
  type ExportContext,
  type SelectionOptions,
  type StartOptions,
} from "./export-task";

export interface ExportParticipantsInput extends StartOptions, SelectionOptions {}

export async function exportParticipants(ctx: ExportContext, input: ExportParticipantsInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  return startExport(ctx, input, () =>
    createParticipantExportTask(ctx.database.db, input.studyKey, selectionRequest(input), OPERATOR.subject),
  );
}

export const exportParticipantsCommand = defineCommand({
  name: "export:participants",
  summary: "export a study's participant states (JSON, as CASE writes them), follow it and download the file",
  flags: () => [
    studyFlag(),
    ...selectionFlags({
      rows: "participants",
      filterExample: '{"studyStatus": "active"}',
      sortHelp: "row order, e.g. '{\"enteredAt\": -1}'",
    }),
    ...startFlags(),
  ],
  values: z.object({ ...selectionValues, ...startValues }).transform(startInput),
  uses: "database",
  run: exportParticipants,
});
