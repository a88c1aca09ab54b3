import { z } from "@hono/zod-openapi";
import { getStudy } from "@studyflow/domain/studies";
import { checkInstanceId } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, studyKeyParam } from "../../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyInfoSchema, presentCaseStudyInfo } from "./present";

export function registerGetStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}",
      tags: ["participant-studies"],
      summary: "One study (public, CASE)",
      description: "The study's key, status, props and stats, as in the public study list. No token needed.",
      request: { params: studyKeyParam, query: instanceQuery },
      responses: {
        200: jsonContent(z.object({ study: caseStudyInfoSchema }), "the study"),
        ...errorResponses([400, 404], { 400: "instanceID names another instance", 404: "study not found" }),
      },
    },
    async (c) => {
      checkInstanceId(deps.config, c.req.valid("query").instanceID);
      const study = await getStudy(db, c.req.valid("param").studyKey);
      return c.json({ study: presentCaseStudyInfo(study) }, 200);
    },
  );
}
