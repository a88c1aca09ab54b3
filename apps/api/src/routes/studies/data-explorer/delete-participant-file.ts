import { assertStudyPermission } from "@studyflow/domain/access";
import type { FileStore } from "@studyflow/domain/files";
import { deleteParticipantFile } from "@studyflow/domain/participant-files";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { jsonContent, messageSchema } from "../../schemas";
import { DELETE_FILES, oneFileErrors, oneFileRoute, requires } from "./participant-file-params";

export function registerDeleteParticipantFile(router: ApiRouter, deps: AppDeps, fileStore: FileStore) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/files/{fileID}",
      tags: ["data-explorer"],
      summary: "Delete a participant file",
      description:
        "Removes the file's record and its bytes in one transaction and answers 200 " +
        '`{"message":"study file deleted"}`, as case-backend. Another study\'s file is not found.' +
        requires(DELETE_FILES),
      ...oneFileRoute,
      responses: {
        200: jsonContent(messageSchema, "deleted"),
        ...oneFileErrors,
      },
    },
    async (c) => {
      const { studyKey, fileID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, DELETE_FILES);
      await deleteParticipantFile(db, fileStore, studyKey, fileID);
      return c.json({ message: "study file deleted" }, 200);
    },
  );
}
