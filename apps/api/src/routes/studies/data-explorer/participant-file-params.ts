import { z } from "@hono/zod-openapi";
import { idParam, studyKeyField } from "./explorer-query";

// Participant file uploads are not stored yet: the list answers in CASE's shape with no files, and
// a single file is never found. Until STUDY_ACTIONS has CASE's get-files/delete-files, reading
// these needs get-participant-states (files belong to participants) and deleting edit-participant-data.
/** The description tail of the file routes. */
export const NOTE = " studyflow does not store participant files yet: the list is empty and every file is not found.";

/** `{studyKey}` and `{fileID}` of one file's routes. */
export const fileParams = z.object({ studyKey: studyKeyField, fileID: idParam("fileID") });
