import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { countParticipants } from "@studyflow/domain/exports";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { exportCountResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";
import { filterQuery } from "./participant-filter-query";

const group = EXPORT_GROUPS.participants;

export function registerCountParticipants(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participants/count",
      tags: ["data-exporter"],
      summary: "Count the participants an export would hold (CASE)",
      description: `Participants matching \`filter\`. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, query: z.object({ filter: filterQuery }) },
      responses: exportCountResponses("filter not JSON, or an unknown field or operator"),
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
      const filter = parseCaseJsonParam("filter", c.req.valid("query").filter);
      await getStudy(db, studyKey);
      return c.json({ count: await countParticipants(db, studyKey, filter === undefined ? {} : { filter }) }, 200);
    },
  );
}
