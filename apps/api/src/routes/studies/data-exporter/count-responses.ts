import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { countResponses } from "@studyflow/domain/exports";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { caseJsonQuery } from "./case-query";
import { exportCountResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";

const group = EXPORT_GROUPS.responses;

export function registerCountResponses(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/responses/count",
      tags: ["data-exporter"],
      summary: "Count the responses an export would hold (CASE)",
      description:
        "Responses of `surveyKey` matching `filter` (CASE's Mongo-style filter on participantID, key, versionID, " +
        "openedAt, submittedAt, arrivedAt, context.X). Without `surveyKey` every survey's responses are counted " +
        `(case-backend counts those with an empty key: none). Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: z.object({
          surveyKey: z.string().max(200).optional().openapi({ example: "weekly" }),
          filter: caseJsonQuery("filter", 'e.g. {"$and":[{"arrivedAt":{"$gt":1780000000}}]}'),
        }),
      },
      responses: exportCountResponses("filter not JSON, or an unknown field or operator"),
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
      const filter = parseCaseJsonParam("filter", query.filter);
      const count = await countResponses(db, studyKey, {
        ...(query.surveyKey ? { surveyKey: query.surveyKey } : {}),
        ...(filter === undefined ? {} : { filter }),
      });
      return c.json({ count }, 200);
    },
  );
}
