import { z } from "@hono/zod-openapi";
import { listStudiesByStatus } from "@studyflow/domain/participant-data";
import { checkInstanceId } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent } from "../../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyInfoSchema, presentCaseStudyInfo } from "./present";

export function registerListStudies(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["participant-studies"],
      summary: "The studies with a status (public, CASE)",
      description:
        "case-backend's public study list: every study with `status` (all studies when it is absent or empty), by key, " +
        "with its key, status, props (names, descriptions, tags, dates, systemDefaultStudy) and stats (zeros). No " +
        "token needed; nothing of a study's configuration, rules or secret is shown.",
      request: {
        query: instanceQuery.extend({
          status: z
            .string()
            .max(50, "status is longer than 50 characters")
            .optional()
            .openapi({ param: { name: "status", in: "query" }, example: "active" }),
        }),
      },
      responses: {
        200: jsonContent(z.object({ studies: z.array(caseStudyInfoSchema) }), "the studies"),
        ...errorResponses([400], { 400: "instanceID names another instance" }),
      },
    },
    async (c) => {
      const query = c.req.valid("query");
      checkInstanceId(deps.config, query.instanceID);
      const studies = await listStudiesByStatus(db, query.status ?? "");
      return c.json({ studies: studies.map((study) => presentCaseStudyInfo(study)) }, 200);
    },
  );
}
