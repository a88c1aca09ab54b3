import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { listStudyParticipantFiles } from "@studyflow/domain/participant-files";
import { managementOf } from "../../../app-env";
import { caseJsonQueryParam, casePageQuery, casePagination, casePaginationSchema } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { studyKeyField } from "./explorer-query";
import { READ_FILES, presentStudyFileInfo, requires, studyFileInfoSchema } from "./participant-file-params";

export function registerListParticipantFiles(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/files",
      tags: ["data-explorer"],
      summary: "A page of the study's participant files",
      description:
        "The files participants uploaded, newest first, in case-backend's FileInfo shape with CASE's pagination " +
        "(`page` default 1, `limit` default 10; everything on page 1 when it fits). `filter` is CASE's file-info " +
        'filter: case-admin sends `{"participantID":"…"}`; `status` and `fileType` can be filtered too, with the ' +
        "operators of the other explorer lists; another field is a 400 naming it." +
        requires(READ_FILES),
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField }),
        query: casePageQuery.extend({
          filter: caseJsonQueryParam("filter", 'CASE\'s file-info filter, e.g. {"participantID":"…"}'),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ fileInfos: z.array(studyFileInfoSchema), pagination: casePaginationSchema }),
          "the page of files",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "page/limit not whole numbers, or a filter that is no JSON or outside the subset",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { page, limit, filter } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, READ_FILES);
      const { files, totalCount } = await listStudyParticipantFiles(
        db,
        studyKey,
        { page, limit },
        parseCaseJsonParam("filter", filter),
      );
      return c.json(
        {
          fileInfos: files.map((file) => presentStudyFileInfo(file, deps.config.INSTANCE_ID)),
          pagination: casePagination(totalCount, page, limit),
        },
        200,
      );
    },
  );
}
