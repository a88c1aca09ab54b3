import { assertStudyPermission } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { NOTE, fileParams } from "./participant-file-params";

export function registerGetParticipantFile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/files/{fileID}",
      tags: ["data-explorer"],
      summary: "Download a participant file (none yet)",
      description: NOTE.trim() + " Requires `get-participant-states`.",
      security: MANAGEMENT_SECURITY,
      request: { params: fileParams },
      responses: { ...errorResponses([400, 401, 403, 404], { 404: "no such file" }) },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, fileID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
      await getStudy(db, studyKey);
      throw new NotFound(`file "${fileID}" not found in study "${studyKey}"`);
    },
  );
}
