import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { deleteExplorerResponses, type ExplorerPageCache } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import { caseJsonQueryParam } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";

import { studyKeyField } from "./explorer-query";

export function registerDeleteResponses(router: ApiRouter, deps: AppDeps, cache: ExplorerPageCache) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/responses",
      tags: ["data-explorer"],
      summary: "Delete the survey responses a filter selects",
      description:
        "Deletes the responses of `surveyKey` (required; it bounds the delete, so an empty `filter` removes that survey's " +
        "responses and no other) that `filter` selects, in one transaction with an audit record (`responses.delete`, " +
        "with the filter and the count). `controlField` must repeat the study key, as case-backend requires, or nothing " +
        "is deleted. Requires `delete-responses`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: z.object({ studyKey: studyKeyField }),
        query: z.object({
          surveyKey: z.string().max(200, "surveyKey is longer than 200 characters").optional(),
          controlField: z
            .string()
            .max(200, "controlField is longer than 200 characters")
            .optional()
            .openapi({ description: "the study key again: the caller's confirmation" }),
          filter: caseJsonQueryParam("filter", 'e.g. {"participantID":"abc"} or {"submittedAt":{"$lt":1780000000}}'),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({
            message: z.string(),
            count: z.number().int().openapi({ description: "responses deleted (not in CASE)" }),
          }),
          "responses deleted",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "controlField is not the study key; surveyKey missing; filter not valid",
          404: "study not found, or no response matches (case-backend answers 500)",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "delete-responses");
      const count = await deleteExplorerResponses(
        db,
        studyKey,
        {
          surveyKey: query.surveyKey,
          controlField: query.controlField,
          filter: parseCaseJsonParam("filter", query.filter),
          actor: who.subject,
        },
        cache,
      );
      return c.json({ message: "study responses deleted", count }, 200);
    },
  );
}
