import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listStudyVariables, readStudyVariable } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { jsonContent, keyString, studyKeyParam } from "../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyVariableSchema, presentCaseStudyVariable } from "./present";

const listRoute = createRoute({
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
});

const getRoute = createRoute({
  method: "get",
  path: "/{studyKey}/variables/{variableKey}",
  tags: ["participant-studies"],
  summary: "One study variable (public, CASE)",
  description: "The variable's key, type, value and last change. No token needed.",
  request: {
    params: studyKeyParam.extend({
      variableKey: keyString("variableKey").openapi({
        param: { name: "variableKey", in: "path" },
        example: "kitStock",
      }),
    }),
    query: instanceQuery,
  },
  responses: {
    200: jsonContent(z.object({ variable: caseStudyVariableSchema }), "the variable"),
    ...errorResponses([400, 404], {
      400: "instanceID names another instance",
      404: "study or variable not found (case-backend: 500)",
    }),
  },
});

export function registerVariables(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(listRoute, async (c) => {
    checkInstanceId(deps.config, c.req.valid("query").instanceID);
    const { studyKey } = c.req.valid("param");
    const variables = await listStudyVariables(db, studyKey);
    return c.json({ variables: variables.map((variable) => presentCaseStudyVariable(studyKey, variable)) }, 200);
  });
  router.openapi(getRoute, async (c) => {
    checkInstanceId(deps.config, c.req.valid("query").instanceID);
    const { studyKey, variableKey } = c.req.valid("param");
    const variable = await readStudyVariable(db, studyKey, variableKey);
    return c.json({ variable: presentCaseStudyVariable(studyKey, variable) }, 200);
  });
}
