import { z } from "@hono/zod-openapi";
import { caseStudyStats, listVisibleStudies } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { caseAdminStudySchema, presentCaseAdminStudy } from "@studyflow/presenters/case-study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";

export function registerListStudies(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      bothSlashes: true,
      tags: ["studies"],
      summary: "The studies the caller may see (CASE Study documents)",
      description:
        "Admins see every study; anyone else the studies they hold any permission for (a permission for study `*` " +
        "shows all), by key. Each as case-backend's Study (`props` with LocalisedObjects, `configs`, `stats`; no " +
        "`secretKey`) with studyflow's own fields beside it (`trackAccount`, `config`, `currentRulesVersion`, " +
        "`createdAt`, `updatedAt`).",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(z.object({ studies: z.array(caseAdminStudySchema) }), "the visible studies, by key"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const overviews = await listVisibleStudies(db, managementOf(c));
      const studies = [];
      for (const overview of overviews) {
        studies.push(
          presentCaseAdminStudy(overview, await caseStudyStats(db, overview.study.key, new Date(deps.clock()))),
        );
      }
      return c.json({ studies }, 200);
    },
  );
}
