import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { listOwnReports } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import { caseJsonQueryParam, casePageQuery, casePaginationSchema } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import { paginationOf } from "../../studies/data-explorer/explorer-query";
import { caseReportSchema, presentCaseReport } from "../../studies/data-explorer/present";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { profileDataErrors, pidQuery, studyParams } from "./profile-query";

export function registerReports(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/reports",
      tags: ["participant-data"],
      summary: "A page of a profile's reports (CASE)",
      description:
        "The reports of the profile's participant that `filter` selects, newest first, paged as case-backend pages " +
        "(`page` default 1, `limit` default 10, at most 1000). `filter` is CASE's Mongo-style JSON on key, " +
        "responseID, timestamp, data.key, data.value ($and, $or, $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte), the " +
        "data explorer's subset; an unknown field or operator is a 400 naming it. The participant's own id is always " +
        "a condition, whatever the filter says.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyParams,
        query: pidQuery.merge(casePageQuery).extend({
          filter: caseJsonQueryParam("filter", 'e.g. {"$and":[{"key":"TB"},{"timestamp":{"$gte":1700000000}}]}'),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ reports: z.array(caseReportSchema), pagination: casePaginationSchema }),
          "a page of reports",
        ),
        ...profileDataErrors("pid missing; page, limit or filter not valid"),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, query.pid);
      const page = await listOwnReports(db, studyKey, profile.id, {
        filter: parseCaseJsonParam("filter", query.filter),
        page: query.page,
        limit: query.limit,
      });
      return c.json({ reports: page.rows.map(presentCaseReport), pagination: paginationOf(page) }, 200);
    },
  );
}
