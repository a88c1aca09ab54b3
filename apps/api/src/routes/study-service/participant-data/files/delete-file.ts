import { assertProfileOfUser } from "@studyflow/domain/access";
import { type FileStore } from "@studyflow/domain/files";
import { deleteOwnParticipantFile } from "@studyflow/domain/participant-files";
import { participantOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../../../schemas";
import { fileParams, oneFileErrors, pidQuery } from "./file-info";

export function registerDeleteParticipantFile(router: ApiRouter, deps: AppDeps, fileStore: FileStore) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/{fileID}",
      tags: ["participant-data"],
      summary: "Delete a participant file (CASE)",
      description:
        "Removes the file's record and its bytes in one transaction; answers 200 with a message, as case-backend. " +
        "Another participant's file is not found.",
      security: PARTICIPANT_SECURITY,
      request: { params: fileParams, query: pidQuery },
      responses: {
        200: jsonContent(messageSchema, "deleted"),
        ...oneFileErrors,
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, fileID } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").pid);
      await deleteOwnParticipantFile(db, fileStore, studyKey, profile.id, fileID);
      return c.json({ message: "file deleted successfully" }, 200);
    },
  );
}
