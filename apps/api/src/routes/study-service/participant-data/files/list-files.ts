import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { listOwnParticipantFiles } from "@studyflow/domain/participant-files";
import { participantOf } from "../../../../app-env";
import { casePageQuery, casePagination, casePaginationSchema } from "../../../../case-compat";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, studyKeyParam } from "../../../schemas";
import { fileInfoSchema, pidQuery, presentFileInfo } from "./file-info";

export function registerListParticipantFiles(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["participant-data"],
      summary: "A page of a profile's participant files (CASE)",
      description:
        "The files of the profile's participant in the study, newest first, with CASE's pagination. A profile that is no " +
        "participant has none. Differences from case-backend: a foreign profile is a 403 (case-backend: 401), a study not " +
        "active a 409 (case-backend: 400).",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam, query: pidQuery.extend(casePageQuery.shape) },
      responses: {
        200: jsonContent(
          z.object({ fileInfos: z.array(fileInfoSchema), pagination: casePaginationSchema }),
          "the page of files",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "pid missing, or page/limit not whole numbers",
          403: "the profile is not the signed-in user's",
          404: "study not found",
          409: "study not active",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { pid, page, limit } = c.req.valid("query");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, pid);
      const { files, totalCount } = await listOwnParticipantFiles(db, studyKey, profile.id, { page, limit });
      return c.json(
        {
          fileInfos: files.map((file) => presentFileInfo(file, deps.config.INSTANCE_ID)),
          pagination: casePagination(totalCount, page, limit),
        },
        200,
      );
    },
  );
}
