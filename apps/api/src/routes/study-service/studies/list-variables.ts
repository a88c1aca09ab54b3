import { z } from "@hono/zod-openapi";
import { listStudyVariables } from "@studyflow/domain/study-config";
import { checkInstanceId } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, studyKeyParam } from "../../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyVariableSchema, presentCaseStudyVariable } from "./present";

export function registerListVariables(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/variables",
      tags: ["participant-studies"],
      summary: "The study's variables (public, CASE)",
      description:
        "Every study variable's key, type, value and last change, as case-backend shows them to participant apps " +
        "(no token; its value projection: no labels or editor settings). Sorted by key.",
      request: { params: studyKeyParam, query: instanceQuery },
      responses: {
        200: jsonContent(z.object({ variables: z.array(caseStudyVariableSchema) }), "the variables"),
        ...errorResponses([400, 404], { 400: "instanceID names another instance", 404: "study not found" }),
      },
    },
    async (c) => {
      checkInstanceId(deps.config, c.req.valid("query").instanceID);
      const { studyKey } = c.req.valid("param");
      const variables = await listStudyVariables(db, studyKey);
      return c.json({ variables: variables.map((variable) => presentCaseStudyVariable(studyKey, variable)) }, 200);
    },
  );
}
