import { z } from "@hono/zod-openapi";
import type { Executor, StudyAction } from "@studyflow/db";
import { assertStudyPermission } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { getStudy } from "@studyflow/domain/studies";
import type { ManagementPrincipal } from "../../../auth/principals";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";

// Participant file uploads are not stored yet: the list answers in CASE's shape with no files, and
// a single file is never found. Until STUDY_ACTIONS has CASE's get-files/delete-files, reading
// these needs get-participant-states (files belong to participants) and deleting edit-participant-data.
/** The description tail of the file routes. */
export const NOTE = " studyflow does not store participant files yet: the list is empty and every file is not found.";

/** `{studyKey}` and `{fileID}` of one file's routes. */
export const fileParams = z.object({ studyKey: studyKeyField, fileID: idParam("fileID") });

/** What the download and delete routes of one file share, after their method, tags and summary. */
export const oneFileRoute = {
  security: MANAGEMENT_SECURITY,
  request: { params: fileParams },
  responses: { ...errorResponses([400, 401, 403, 404], { 404: "no such file" }) },
  bothSlashes: true,
} as const;

/** The answer of the download and delete routes: the study's permission checked, the study found, no file. */
export async function answerNoFile(
  db: Executor,
  who: ManagementPrincipal,
  { studyKey, fileID }: { studyKey: string; fileID: string },
  permission: StudyAction,
): Promise<never> {
  await assertStudyPermission(db, who, studyKey, permission);
  await getStudy(db, studyKey);
  throw new NotFound(`file "${fileID}" not found in study "${studyKey}"`);
}
