import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { NotFound, assertStudyPermission, getStudy } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import {
  caseJsonQueryParam,
  casePageQuery,
  casePagination,
  casePaginationSchema,
  openapiBothSlashes,
} from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";

import { idParam, studyKeyField } from "./explorer-query";

// Participant file uploads are not stored yet: the list answers in CASE's shape with no files, and
// a single file is never found. Until STUDY_ACTIONS has CASE's get-files/delete-files, reading
// these needs get-participant-states (files belong to participants) and deleting edit-participant-data.

const NOTE = " studyflow does not store participant files yet: the list is empty and every file is not found.";

const listRoute = createRoute({
  method: "get",
  path: "/files",
  tags: ["data-explorer"],
  summary: "A page of participant files (none yet)",
  description: "CASE's file list with its pagination." + NOTE + " Requires `get-participant-states`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: z.object({ studyKey: studyKeyField }),
    query: casePageQuery.extend({
      filter: caseJsonQueryParam("filter", "CASE's file-info filter (nothing to filter yet)"),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ fileInfos: z.array(z.record(z.string(), z.unknown())), pagination: casePaginationSchema }),
      "no files",
    ),
    ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
  },
});

const fileParams = z.object({ studyKey: studyKeyField, fileID: idParam("fileID") });

const getRoute = createRoute({
  method: "get",
  path: "/files/{fileID}",
  tags: ["data-explorer"],
  summary: "Download a participant file (none yet)",
  description: NOTE.trim() + " Requires `get-participant-states`.",
  security: MANAGEMENT_SECURITY,
  request: { params: fileParams },
  responses: { ...errorResponses([400, 401, 403, 404], { 404: "no such file" }) },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/files/{fileID}",
  tags: ["data-explorer"],
  summary: "Delete a participant file (none yet)",
  description: NOTE.trim() + " Requires `edit-participant-data`.",
  security: MANAGEMENT_SECURITY,
  request: { params: fileParams },
  responses: { ...errorResponses([400, 401, 403, 404], { 404: "no such file" }) },
});

export function registerParticipantFiles(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  openapiBothSlashes(router, listRoute, async (c) => {
    const { studyKey } = c.req.valid("param");
    const { page, limit } = c.req.valid("query");
    await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
    await getStudy(db, studyKey);
    return c.json({ fileInfos: [], pagination: casePagination(0, page, limit) }, 200);
  });
  openapiBothSlashes(router, getRoute, async (c) => {
    const { studyKey, fileID } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
    await getStudy(db, studyKey);
    throw new NotFound(`file "${fileID}" not found in study "${studyKey}"`);
  });
  openapiBothSlashes(router, deleteRoute, async (c) => {
    const { studyKey, fileID } = c.req.valid("param");
    await assertStudyPermission(db, managementOf(c), studyKey, "edit-participant-data");
    await getStudy(db, studyKey);
    throw new NotFound(`file "${fileID}" not found in study "${studyKey}"`);
  });
}
