import { z } from "@hono/zod-openapi";
import { readStudyVariable } from "@studyflow/domain/study-config";
import { checkInstanceId } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, keyString, studyKeyParam } from "../../schemas";
import { instanceQuery } from "./instance-query";
import { caseStudyVariableSchema, presentCaseStudyVariable } from "./present";

export function registerGetVariable(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
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
    },
    async (c) => {
      checkInstanceId(deps.config, c.req.valid("query").instanceID);
      const { studyKey, variableKey } = c.req.valid("param");
      const variable = await readStudyVariable(db, studyKey, variableKey);
      return c.json({ variable: presentCaseStudyVariable(studyKey, variable) }, 200);
    },
  );
}
