import { z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import { type FileStore } from "@studyflow/domain/files";
import { uploadParticipantFile } from "@studyflow/domain/participant-files";
import { participantOf, type AppEnv } from "../../../../app-env";
import type { AppDeps } from "../../../../deps";
import { domainContext } from "../../../../domain-context";
import { errorBody } from "../../../../errors";
import { rateLimit, type RateLimiter } from "../../../../rate-limit";
import { describeIssues } from "../../../../validation";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, studyKeyParam } from "../../../schemas";
import { fileInfoSchema, presentFileInfo } from "./file-info";
import { UPLOAD_FORM_LIMITS, readMultipartUpload, type MultipartUploadLimits } from "./multipart-upload";

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

/**
 * The form as the OpenAPI document describes it. A plain schema, not a zod one: with a zod schema
 * the router would parse the whole body into memory before the handler; the handler streams it
 * (readMultipartUpload) and checks profileID itself.
 */
const uploadForm = {
  type: "object" as const,
  required: ["profileID", "file"],
  properties: {
    profileID: {
      type: "string" as const,
      minLength: 1,
      maxLength: 200,
      description: "the profile (of the signed-in user) the file belongs to",
    },
    file: { type: "string" as const, format: "binary", description: "the file; its type is read from its bytes" },
  },
};

/**
 * 413 for a declared Content-Length over the upload's bound, before a byte of the body is read. A
 * body without one (chunked) is counted by readMultipartUpload as it is parsed; hono's bodyLimit
 * is not used for it because it reads such a body whole into memory before passing it on.
 */
function declaredLengthWithin(maxBytes: number, message: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const length = c.req.header("content-length");
    if (
      length !== undefined &&
      c.req.header("transfer-encoding") === undefined &&
      /^\d+$/.test(length) &&
      Number(length) > maxBytes
    ) {
      return c.json(errorBody(message), 413);
    }
    await next();
  });
}

/** profileID as the route requires it, with the message the form's validation has always given. */
function profileIdOf(fields: ReadonlyMap<string, string>): string {
  const value = fields.get("profileID");
  if (value === undefined) throw new Invalid("form.profileID: profileID is required: the profile's id");
  const parsed = profileIdField.safeParse(value);
  if (!parsed.success) throw new Invalid(describeIssues(parsed.error.issues, "form.profileID"));
  return parsed.data;
}

/** The bounds of an upload: the file's (PARTICIPANT_FILE_MAX_BYTES) and the body's, the form's framing included. */
function uploadLimits(deps: AppDeps): MultipartUploadLimits {
  const maxBytes = deps.config.PARTICIPANT_FILE_MAX_BYTES;
  return {
    fileBytes: maxBytes,
    bodyBytes: maxBytes + UPLOAD_FORM_OVERHEAD_BYTES,
    tooLargeMessage: `file: the upload is larger than the ${maxBytes} bytes allowed`,
  };
}

function hourlyUploadLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "participant-file-upload",
    limit: UPLOADS_PER_HOUR,
    windowSeconds: 3_600,
    count: "every-request",
    message: `too many uploads: at most ${UPLOADS_PER_HOUR} an hour`,
    keys: (c) => [`user:${participantOf(c).userId}`],
  });
}

export function registerUploadParticipantFile(
  router: ApiRouter,
  deps: AppDeps,
  limiter: RateLimiter,
  fileStore: FileStore,
) {
  const db = deps.database.db;
  const limits = uploadLimits(deps);
  defineRoute(
    router,
    {
      // Read by nothing before the handler: the participant is authenticated (the router's
      // middleware), the body a form, the upload within the hourly limit, its declared length within
      // the bound; the handler then reads the body as it arrives.
      middleware: [
        multipartOnly,
        hourlyUploadLimit(limiter),
        declaredLengthWithin(limits.bodyBytes, limits.tooLargeMessage),
      ],
      method: "post",
      path: "/",
      tags: ["participant-data"],
      summary: "Upload a participant file (CASE)",
      description:
        "A multipart form with `profileID` and `file`, as the CASE participant app sends it. The file's type is read from " +
        "its bytes (PARTICIPANT_FILE_TYPES, default image/jpeg and image/png) and its size bounded " +
        "(PARTICIPANT_FILE_MAX_BYTES, default 20 MiB, case-backend's). The study must be active, the profile a participant " +
        "of it, and the study's `participantFileUploadRule` true for a CUSTOM event `FILE_UPLOAD` with the payload " +
        "`{fileSize, contentType}` (no rule: uploads are refused, as in case-backend). No study rules run and no state " +
        "changes, as in case-backend. The body is read only after the token is checked, only as a multipart form, and " +
        "as it arrives: only the file's bytes are kept, at most PARTICIPANT_FILE_MAX_BYTES, the body bounded by that plus " +
        `64 KiB for the form's framing, at most ${UPLOAD_FORM_LIMITS.fields} text fields of ${UPLOAD_FORM_LIMITS.fieldBytes} ` +
        `bytes and ${UPLOAD_FORM_LIMITS.parts} parts; the first thing over a limit ends the read. ` +
        "Differences from case-backend: a file too large is a 413 (case-backend: 400); a " +
        "foreign profile a 403 (case-backend: 401); a study not active a 409; a profile that is no participant a 404.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyKeyParam,
        body: { required: true, content: { "multipart/form-data": { schema: uploadForm } } },
      },
      responses: {
        200: jsonContent(z.object({ fileInfo: fileInfoSchema }), "the stored file"),
        ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429], {
          400:
            "profileID or file missing, an empty file, a type that is not allowed (read from the bytes), a second file, " +
            "too many fields or parts, a field too long, or a body that is no well-formed multipart form",
          403: "the profile is not the signed-in user's, or the study's upload rule does not allow the file",
          404: "study not found, or the profile is not a participant of it",
          409: "study not active",
          413:
            "the file is larger than PARTICIPANT_FILE_MAX_BYTES (refused once the file passes it), or the body larger than " +
            "that plus 64 KiB (a declared Content-Length over it: before the body is read)",
          415: "the body is not a multipart/form-data form (the body is not read)",
          429: "too many uploads by this user",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const form = await readMultipartUpload(c.req.raw.body, c.req.header("content-type") ?? "", limits);
      const profileID = profileIdOf(form.fields);
      if (form.file === null) throw new Invalid("form.file: file is required: one file part");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, profileID);
      const row = await uploadParticipantFile(
        db,
        fileStore,
        {
          studyKey,
          profileId: profile.id,
          bytes: form.file,
          limits: { maxBytes: limits.fileBytes, contentTypes: deps.config.PARTICIPANT_FILE_TYPES },
        },
        domainContext(deps),
      );
      return c.json({ fileInfo: presentFileInfo(row, deps.config.INSTANCE_ID) }, 200);
    },
  );
}
