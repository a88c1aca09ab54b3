import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import type { FileStore } from "@studyflow/domain/files";
import { openParticipantFile } from "@studyflow/domain/participant-files";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { sendFile } from "../../download";
import { READ_FILES, oneFileErrors, oneFileRoute, requires } from "./participant-file-params";

export function registerGetParticipantFile(router: ApiRouter, deps: AppDeps, fileStore: FileStore) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/files/{fileID}",
      tags: ["data-explorer"],
      summary: "Download a participant file",
      description:
        "The file's bytes with its content type, as an attachment named `<id>.<ext>` (`Content-Disposition: " +
        "attachment; filename=…`, unquoted, as case-backend sends it and case-admin reads it), with " +
        "`X-Content-Type-Options: nosniff` and `Cache-Control: private, no-store`. Another study's file is not found." +
        requires(READ_FILES),
      ...oneFileRoute,
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
    },
    async (c) => {
      const { studyKey, fileID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_FILES);
      const opened = await openParticipantFile(db, fileStore, studyKey, fileID);
      return sendFile(c, {
        fileName: opened.fileName,
        contentType: opened.file.fileType,
        size: opened.file.size,
        body: opened.body,
      });
    },
  );
}
