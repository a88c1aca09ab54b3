import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getStudy } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, studyKeyParam } from "../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyInfoSchema, presentCaseStudyInfo } from "./present";

const route = createRoute({
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
});

export function registerGetStudy(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    checkInstanceId(deps.config, c.req.valid("query").instanceID);
    const study = await getStudy(db, c.req.valid("param").studyKey);
    return c.json({ study: presentCaseStudyInfo(study) }, 200);
  });
}
