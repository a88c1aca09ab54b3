import { z } from "@hono/zod-openapi";
import { assertStudyVisible, caseStudyStats, getStudyOverview } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { caseAdminStudySchema, presentCaseAdminStudy } from "@studyflow/presenters/case-study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

export function registerGetStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}",
      tags: ["studies"],
      summary: "A study (CASE Study document)",
      description:
        "The study as case-backend's Study (`props`, `configs`, `stats`) with studyflow's own fields beside it. " +
        "Requires any permission for the study (case-backend: `read-study-config`).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ study: caseAdminStudySchema }), "the study"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyVisible(db, managementOf(c), studyKey);
      const overview = await getStudyOverview(db, studyKey);
      return c.json(
        { study: presentCaseAdminStudy(overview, await caseStudyStats(db, studyKey, new Date(deps.clock()))) },
        200,
      );
    },
  );
}
