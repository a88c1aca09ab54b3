import { z } from "@hono/zod-openapi";
import type { PermissionAction } from "@studyflow/db";
import { participantFileName, type ParticipantFileRow } from "@studyflow/domain/participant-files";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";

/**
 * case-backend checks its get-files and delete-files; studyflow grants made before those names
 * existed gave file access through get-participant-states and edit-participant-data (files belong
 * to participants), so either name opens the routes.
 */
export const READ_FILES: readonly PermissionAction[] = ["get-files", "get-participant-states"];
export const DELETE_FILES: readonly PermissionAction[] = ["delete-files", "edit-participant-data"];

/** The description tail naming who may call a file route. */
export const requires = (actions: readonly PermissionAction[]) =>
  ` Requires ${actions.map((action) => `\`${action}\``).join(" or ")}.`;

/** A study's participant file as case-backend's data explorer lists it (its FileInfo, empty fields left out). */
export const studyFileInfoSchema = z
  .object({
    id: z.string(),
    participantID: z.string().openapi({ description: "the participant's pseudonymous id in the study" }),
    status: z.string().openapi({ description: "CASE's file status: always `ready` (an upload is one transaction)" }),
    path: z
      .string()
      .openapi({ description: "`<instance>/<studyKey>/<id>.<ext>`, as case-backend names the stored file" }),
    createdAt: z.string().openapi({ description: "RFC 3339 time of the upload" }),
    submittedAt: z.number().int().openapi({
      description: "the upload's time in Unix seconds (CASE's older field, still read by older case-admin)",
    }),
    fileType: z.string().openapi({ description: "the content type read from the file's bytes", example: "image/jpeg" }),
    visibleToParticipant: z.boolean(),
    size: z.number().int().openapi({ description: "bytes" }),
  })
  .openapi("StudyParticipantFileInfo");

export function presentStudyFileInfo(
  file: ParticipantFileRow,
  instanceId: string,
): z.infer<typeof studyFileInfoSchema> {
  return {
    id: file.id,
    participantID: file.participantId,
    status: file.status,
    path: `${instanceId}/${file.studyKey}/${participantFileName(file)}`,
    createdAt: file.createdAt.toISOString(),
    submittedAt: Math.floor(file.createdAt.getTime() / 1000),
    fileType: file.fileType,
    visibleToParticipant: true,
    size: file.size,
  };
}

/** `{studyKey}` and `{fileID}` of one file's routes. */
export const fileParams = z.object({ studyKey: studyKeyField, fileID: idParam("fileID") });

/** What the download and delete routes of one file share, after their method, tags, summary and answer. */
export const oneFileRoute = {
  security: MANAGEMENT_SECURITY,
  request: { params: fileParams },
  bothSlashes: true,
} as const;

export const oneFileErrors = errorResponses([400, 401, 403, 404], {
  404: "study not found, or no such file in this study",
});
