import { z } from "@hono/zod-openapi";
import { participantFileName, type ParticipantFileRow } from "@studyflow/domain/participant-files";
import { errorResponses } from "../../../openapi-errors";
import { keyString } from "../../../schemas";

/**
 * A participant file as case-backend describes it (its FileInfo). Left out: the pseudonymous
 * participantID (the study's data is keyed by it; a copy in the person's hands would tie that data
 * back to them) and uploadedBy/previewPath (always empty for a participant's own upload).
 */
export const fileInfoSchema = z
  .object({
    id: z.string(),
    status: z.string().openapi({ description: "CASE's file status: always `ready` (an upload is one transaction)" }),
    path: z
      .string()
      .openapi({ description: "`<instance>/<studyKey>/<id>.<ext>`, as case-backend names the stored file" }),
    createdAt: z.string().openapi({ description: "RFC 3339 time of the upload" }),
    fileType: z.string().openapi({ description: "the content type read from the file's bytes", example: "image/jpeg" }),
    visibleToParticipant: z.boolean(),
    size: z.number().int().openapi({ description: "bytes" }),
  })
  .openapi("ParticipantFileInfo");

export function presentFileInfo(file: ParticipantFileRow, instanceId: string): z.infer<typeof fileInfoSchema> {
  return {
    id: file.id,
    status: file.status,
    path: `${instanceId}/${file.studyKey}/${participantFileName(file)}`,
    createdAt: file.createdAt.toISOString(),
    fileType: file.fileType,
    visibleToParticipant: true,
    size: file.size,
  };
}

/** `pid`: the profile whose participant's files are meant (case-backend's query name). */
export const pidQuery = z.object({
  pid: z
    .string({ error: "pid is required: the profile's id" })
    .min(1, "pid must not be empty")
    .max(200, "pid is longer than 200 characters")
    .openapi({ param: { name: "pid", in: "query" }, description: "a profile of the signed-in user" }),
});

export const fileParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" }, example: "tekenradar" }),
  fileID: z
    .string()
    .min(1, "fileID must not be empty")
    .max(200, "fileID is longer than 200 characters")
    .openapi({ param: { name: "fileID", in: "path" }, description: "the file's id from the upload or the list" }),
});

/** The errors of the download and the deletion of one of a profile's files. */
export const oneFileErrors = errorResponses([400, 401, 403, 404, 409], {
  400: "pid missing",
  403: "the profile is not the signed-in user's",
  404: "study not found, or no such file of this profile's participant",
  409: "study not active",
});
