import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { countParticipants, createParticipantExportTask } from "@studyflow/domain/exports";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { caseJsonQuery } from "./case-query";
import { startExportResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";
import { gzipQuery, startExport } from "./start-export";
import { filterQuery } from "./participant-filter-query";

const group = EXPORT_GROUPS.participants;

export function registerStartParticipantsExport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/participants/",
      tags: ["data-exporter"],
      summary: "Start an export of participant states as CASE's JSON file",
      description:
        'Records an export task and queues it; the file is CASE\'s `{"participants": [...]}`. Query only, no body. ' +
        'When no participant matches: 200 `{"error": "no participants to export"}` and no task, as case-backend ' +
        `answers. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: z.object({
          filter: filterQuery,
          sort: caseJsonQuery("sort", 'e.g. {"participantID":1}'),
          gzip: gzipQuery,
        }),
      },
      responses: startExportResponses("participant", "filter or sort not valid (the message names it)"),
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, group.permission);
      const filter = parseCaseJsonParam("filter", query.filter);
      const sort = parseCaseJsonParam("sort", query.sort);
      await getStudy(db, studyKey);
      const selection = filter === undefined ? {} : { filter };
      return startExport(c, deps, group, {
        count: () => countParticipants(db, studyKey, selection),
        create: () =>
          createParticipantExportTask(
            db,
            studyKey,
            { ...selection, ...(sort === undefined ? {} : { sort }), gzip: query.gzip ?? false },
            who.subject,
          ),
      });
    },
  );
}
