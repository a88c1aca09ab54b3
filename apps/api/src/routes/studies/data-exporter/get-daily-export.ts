import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { listDailyExports, openDailyExport } from "@studyflow/domain/exports";
import { type FileStore } from "@studyflow/domain/files";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { caseDailyExportName } from "@studyflow/presenters/case-daily-export";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { sendFile } from "../../download";
import { decodeExportId, exportIdParams } from "./export-id";
import { EXPORT_GROUPS } from "./export-groups";

const group = EXPORT_GROUPS.responses;

export function registerGetDailyExport(router: ApiRouter, deps: AppDeps, fileStore: FileStore) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/responses/daily-exports/{exportID}",
      tags: ["data-exporter"],
      summary: "Download one daily response export (CASE)",
      description:
        "`exportID` is the name from the list, base64-encoded (as case-admin sends it). The file is streamed as an " +
        `attachment, as the export task results are. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: { params: exportIdParams },
      responses: {
        200: {
          description: "the export file",
          content: { "text/csv": { schema: z.string() }, "application/json": { schema: z.string() } },
        },
        ...errorResponses([400, 401, 403, 404], {
          400: "exportID is not a base64-encoded file name",
          404: "no such daily export in this study, or retention removed it",
        }),
      },
    },
    async (c) => {
      const { studyKey, exportID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
      const name = decodeExportId(exportID);
      // One export per survey and day: the listed name finds its file.
      const listing = (await listDailyExports(db, studyKey)).find((entry) => caseDailyExportName(entry) === name);
      if (!listing) throw new NotFound(`file "${name}" does not exist`);
      return sendFile(c, await openDailyExport(db, fileStore, studyKey, listing.id));
    },
  );
}
