import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { type FileStore } from "@studyflow/domain/files";
import { openOwnParticipantFile } from "@studyflow/domain/participant-files";
import { participantOf } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import { sendFile } from "../../../download";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { PARTICIPANT_SECURITY } from "../../../schemas";
import { fileParams, oneFileErrors, pidQuery } from "./file-info";

export function registerGetParticipantFile(router: ApiRouter, deps: AppDeps, fileStore: FileStore) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{fileID}",
      tags: ["participant-data"],
      summary: "Download a participant file (CASE)",
      description:
        "The file's bytes with its content type, as an attachment named `<id>.<ext>` (as case-backend names it), with " +
        "`X-Content-Type-Options: nosniff` and `Cache-Control: private, no-store`. Another participant's file is not found.",
      security: PARTICIPANT_SECURITY,
      request: { params: fileParams, query: pidQuery },
      responses: {
        200: {
          description: "the file",
          content: {
            "image/jpeg": { schema: z.string().openapi({ format: "binary" }) },
            "image/png": { schema: z.string().openapi({ format: "binary" }) },
          },
        },
        ...oneFileErrors,
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, fileID } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").pid);
      const opened = await openOwnParticipantFile(db, fileStore, studyKey, profile.id, fileID);
      return sendFile(c, {
        fileName: opened.fileName,
        contentType: opened.file.fileType,
        size: opened.file.size,
        body: opened.body,
      });
    },
  );
}
