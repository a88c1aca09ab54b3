import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import { caseJsonQueryParam, casePageQuery, casePagination, casePaginationSchema } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { studyKeyField } from "./explorer-query";
import { NOTE } from "./participant-file-params";

export function registerListParticipantFiles(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/files",
      tags: ["data-explorer"],
      summary: "A page of participant files (none yet)",
      description: "CASE's file list with its pagination." + NOTE + " Requires `get-participant-states`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField }),
        query: casePageQuery.extend({
          filter: caseJsonQueryParam("filter", "CASE's file-info filter (nothing to filter yet)"),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ fileInfos: z.array(z.record(z.string(), z.unknown())), pagination: casePaginationSchema }),
          "no files",
        ),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { page, limit } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
      await getStudy(db, studyKey);
      return c.json({ fileInfos: [], pagination: casePagination(0, page, limit) }, 200);
    },
  );
}
