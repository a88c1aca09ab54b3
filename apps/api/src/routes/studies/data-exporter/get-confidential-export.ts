import { assertStudyPermission } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { decodeExportId, exportIdParams } from "./export-id";

export function registerGetConfidentialExport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/confidential-responses/{exportID}",
      tags: ["data-exporter"],
      summary: "Download a prepared confidential-response file (CASE); studyflow prepares none, so always 404",
      description:
        "Kept so CASE clients get a clear answer: the list is always empty, and any file asked for is not found. " +
        "Requires `get-confidential-responses`.",
      security: MANAGEMENT_SECURITY,
      request: { params: exportIdParams },
      responses: {
        ...errorResponses([400, 401, 403, 404], {
          400: "exportID is not a base64-encoded file name",
          404: "no such file (studyflow keeps no prepared confidential files), or no such study",
        }),
      },
    },
    async (c) => {
      const { studyKey, exportID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-confidential-responses");
      await getStudy(db, studyKey);
      const fileName = decodeExportId(exportID);
      throw new NotFound(
        `file "${fileName}" does not exist: studyflow prepares no confidential-response files; ` +
          "read confidential responses with POST …/data-exporter/confidential-responses",
      );
    },
  );
}
