import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  assertStudyPermission,
  countParticipants,
  createParticipantExportTask,
  getStudy,
  parseCaseJsonParam,
} from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { openapiBothSlashes } from "../../../case-compat";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";
import { caseJsonQuery } from "./case-query";
import { EXPORT_GROUPS } from "./export-groups";
import { gzipQuery, startExport, startExportAnswer } from "./start-export";

const group = EXPORT_GROUPS.participants;

const filterQuery = caseJsonQuery(
  "filter",
  'CASE\'s Mongo-style filter on participantID, studyStatus, enteredAt, modifiedAt, flags.X, linkingCodes.X, e.g. {"studyStatus":"active"}',
);

const countRoute = createRoute({
  method: "get",
  path: "/participants/count",
  tags: ["data-exporter"],
  summary: "Count the participants an export would hold (CASE)",
  description: `Participants matching \`filter\`. Requires \`${group.permission}\`.`,
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam, query: z.object({ filter: filterQuery }) },
  responses: {
    200: jsonContent(z.object({ count: z.number().int() }), "how many"),
    ...errorResponses([400, 401, 403, 404], {
      400: "filter not JSON, or an unknown field or operator",
      404: "study not found",
    }),
  },
});

const startRoute = createRoute({
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
  responses: {
    200: jsonContent(startExportAnswer, "the task, recorded and queued; or `{error}` when no participant matches"),
    ...errorResponses([400, 401, 403, 404, 503], {
      400: "filter or sort not valid (the message names it)",
      404: "study not found",
      503: "the job queue is unavailable",
    }),
  },
});

export function registerParticipantsExport(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(countRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, group.permission);
    const filter = parseCaseJsonParam("filter", c.req.valid("query").filter);
    await getStudy(db, studyKey);
    return c.json({ count: await countParticipants(db, studyKey, filter === undefined ? {} : { filter }) }, 200);
  });
  openapiBothSlashes(router, startRoute, async (c) => {
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
  });
}
