import { createParticipantExportTask } from "@studyflow/domain/exports";
import { defineExportCommand } from "./export-task";

export const exportParticipantsCommand = defineExportCommand({
  name: "export:participants",
  summary: "export a study's participant states (JSON, as CASE writes them), follow it and download the file",
  flags: () => [],
  selection: {
    rows: "participants",
    filterExample: '{"studyStatus": "active"}',
    sortHelp: "row order, e.g. '{\"enteredAt\": -1}'",
  },
  values: {},
  request: () => ({}),
  record: createParticipantExportTask,
});
