import { z } from "@hono/zod-openapi";
import { errorResponses } from "../../openapi-errors";
import { studyKeyParam } from "../../schemas";

/** Most profiles one request may name: a user has a handful; this bounds the work a request asks for. */
export const MAX_PIDS = 100;

const profileId = (name: string) =>
  z.string().min(1, `${name} must not be empty`).max(200, `${name} is longer than 200 characters`);

/** `?pid=`: one of the signed-in user's profiles. */
export const pidQuery = z.object({
  pid: profileId("pid").openapi({ param: { name: "pid", in: "query" }, description: "one of the user's profile ids" }),
});

/** `?pid=&key=`: one of the user's profiles and one key of its data (one key per request, as case-backend). */
export const pidKeyQuery = (example: string) =>
  pidQuery.extend({
    key: z
      .string()
      .min(1, "key must not be empty")
      .max(200, "key is longer than 200 characters")
      .openapi({ param: { name: "key", in: "query" }, example }),
  });

/** `?pids=p1,p2`: several of the signed-in user's profiles, comma-separated. */
export const pidsQuery = z.object({
  pids: z
    .string()
    .min(1, "pids must name at least one profile")
    .max(MAX_PIDS * 201, `pids names more than ${MAX_PIDS} profiles`)
    .transform((raw, ctx) => {
      const ids = raw.split(",");
      if (ids.length > MAX_PIDS) ctx.addIssue({ code: "custom", message: `pids names more than ${MAX_PIDS} profiles` });
      if (ids.some((id) => id === "" || id.length > 200)) {
        ctx.addIssue({ code: "custom", message: "pids: every profile id must have 1 to 200 characters" });
      }
      return ids;
    })
    .openapi({
      type: "string",
      param: { name: "pids", in: "query" },
      description: "comma-separated profile ids, all the user's own",
      example: "6f1c…,9a2b…",
    }),
});

export const studyParams = studyKeyParam;

/** The answer when a profile is someone else's: nothing of any profile is read then. */
export const FORBIDDEN_PROFILE = "a profile named is not the signed-in user's (nothing is read)";

/** The errors of a read of one profile's data in a study; `invalidInput` says which of its query can be wrong. */
export const profileDataErrors = (invalidInput: string) =>
  errorResponses([400, 401, 403, 404], { 400: invalidInput, 403: FORBIDDEN_PROFILE, 404: "study not found" });
