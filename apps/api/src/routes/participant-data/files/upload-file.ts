import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { assertProfileOfUser, uploadParticipantFile, type FileStore } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../../app-env";
import { openapiBothSlashes } from "../../../case-compat";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { errorBody } from "../../../errors";
import { limitBodySize } from "../../../middleware/body-size";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, studyKeyParam } from "../../schemas";
import { fileInfoSchema, presentFileInfo } from "./file-info";

/**
 * Bytes a multipart upload carries besides the file: boundaries, part headers, the profileID
 * field. A browser's form with one file and one short field takes well under 1 KiB; 64 KiB leaves
 * room for long file names and extra headers without letting a second file through.
 */
export const UPLOAD_FORM_OVERHEAD_BYTES = 64 * 1024;

/**
 * Uploads per user per hour. A participant photographs a few tick bites or rashes at a time; 20
 * an hour is generous for that and bounds what one account can store (at the default 20 MiB
 * limit, 400 MiB an hour).
 */
const UPLOADS_PER_HOUR = 20;

/** The upload route's path below the app's prefix, for the app's general body limit to leave it to this route's. */
const UPLOAD_PATH = /^\/v1\/study-service\/participant-data\/[^/]+\/files\/?$/;

/**
 * Whether a request is a participant file upload: its body may be larger than the app's general
 * limit, and this route bounds and reads it (the app's middleware leaves it unread).
 */
export const isParticipantFileUpload = (method: string, path: string) => method === "POST" && UPLOAD_PATH.test(path);

/** The one body this route reads: the CASE participant app's multipart form. */
const MULTIPART_FORM = /^\s*multipart\/form-data\s*(?:;|$)/i;

/**
 * 415 for anything but a multipart form, decided from the header alone: the body of a request
 * this route would refuse is never read.
 */
const multipartOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!MULTIPART_FORM.test(c.req.header("content-type") ?? "")) {
    return c.json(errorBody("the upload must be a multipart/form-data form with profileID and file"), 415);
  }
  await next();
});

const uploadForm = z.object({
  profileID: profileIdField.openapi({ description: "the profile (of the signed-in user) the file belongs to" }),
  file: z
    .custom<File>((value) => value instanceof File, { message: "file is required: one file part" })
    .openapi({ type: "string", format: "binary", description: "the file; its type is read from its bytes" }),
});

const route = createRoute({
  method: "post",
  path: "/{studyKey}/files",
  tags: ["participant-data"],
  summary: "Upload a participant file (CASE)",
  description:
    "A multipart form with `profileID` and `file`, as the CASE participant app sends it. The file's type is read from " +
    "its bytes (PARTICIPANT_FILE_TYPES, default image/jpeg and image/png) and its size bounded " +
    "(PARTICIPANT_FILE_MAX_BYTES, default 20 MiB, case-backend's). The study must be active, the profile a participant " +
    "of it, and the study's `participantFileUploadRule` true for a CUSTOM event `FILE_UPLOAD` with the payload " +
    "`{fileSize, contentType}` (no rule: uploads are refused, as in case-backend). No study rules run and no state " +
    "changes, as in case-backend. The body is read only after the token is checked, only as a multipart form, and " +
    "only up to PARTICIPANT_FILE_MAX_BYTES (plus 64 KiB for the form's framing). Differences from case-backend: a file too large is a 413 (case-backend: 400); a " +
    "foreign profile a 403 (case-backend: 401); a study not active a 409; a profile that is no participant a 404.",
  security: PARTICIPANT_SECURITY,
  request: {
    params: studyKeyParam,
    body: { required: true, content: { "multipart/form-data": { schema: uploadForm } } },
  },
  responses: {
    200: jsonContent(z.object({ fileInfo: fileInfoSchema }), "the stored file"),
    ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429], {
      400: "profileID or file missing, an empty file, or a type that is not allowed (read from the bytes)",
      403: "the profile is not the signed-in user's, or the study's upload rule does not allow the file",
      404: "study not found, or the profile is not a participant of it",
      409: "study not active",
      413: "the upload is larger than PARTICIPANT_FILE_MAX_BYTES (a declared Content-Length over it: before the body is read)",
      415: "the body is not a multipart/form-data form (the body is not read)",
      429: "too many uploads by this user",
    }),
  },
});

export function registerUploadParticipantFile(
  router: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  limiter: RateLimiter,
  fileStore: FileStore,
) {
  const db = deps.database.db;
  const maxBytes = deps.config.PARTICIPANT_FILE_MAX_BYTES;
  // Read by nothing before this: the participant is authenticated (the router's middleware), the
  // body a form, the upload within the hourly limit; a declared length over the limit is a 413 at
  // once, a chunked body is counted as it arrives and refused once past the limit.
  const uploadBodyLimit = limitBodySize(
    maxBytes + UPLOAD_FORM_OVERHEAD_BYTES,
    `file: the upload is larger than the ${maxBytes} bytes allowed`,
  );
  const uploadLimit = rateLimit(limiter, {
    name: "participant-file-upload",
    limit: UPLOADS_PER_HOUR,
    windowSeconds: 3_600,
    count: "every-request",
    message: `too many uploads: at most ${UPLOADS_PER_HOUR} an hour`,
    keys: (c) => [`user:${participantOf(c).userId}`],
  });
  openapiBothSlashes(router, { ...route, middleware: [multipartOnly, uploadLimit, uploadBodyLimit] }, async (c) => {
    const { studyKey } = c.req.valid("param");
    const { profileID, file } = c.req.valid("form");
    const profile = await assertProfileOfUser(db, participantOf(c).userId, profileID);
    const row = await uploadParticipantFile(
      db,
      fileStore,
      {
        studyKey,
        profileId: profile.id,
        bytes: new Uint8Array(await file.arrayBuffer()),
        limits: { maxBytes, contentTypes: deps.config.PARTICIPANT_FILE_TYPES },
      },
      domainContext(deps),
    );
    return c.json({ fileInfo: presentFileInfo(row, deps.config.INSTANCE_ID) }, 200);
  });
}
