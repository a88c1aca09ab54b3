import { z } from "@hono/zod-openapi";
import { studyCodeExists } from "@studyflow/domain/study-config";
import { checkInstanceId } from "../../../case-compat";
import { addressKeys } from "../../../client-address";
import type { AppDeps } from "../../../deps";
import { rateLimit, type RateLimiter } from "../../../rate-limit";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { jsonContent, studyKeyParam } from "../../schemas";
import { codeQuery } from "./code-list-query";

/**
 * The check is public and says whether a code is valid: an address that keeps asking is trying
 * codes, not typing one. Generous for a participant app, which asks once per code entered.
 */
function guessLimit(limiter: RateLimiter) {
  return rateLimit(limiter, {
    name: "code-list-has-code",
    limit: 60,
    windowSeconds: 15 * 60,
    count: "every-request",
    message: "too many code checks from this address; try again later",
    keys: (c) => addressKeys(c, "ip:"),
  });
}

export function registerCodeListHasCode(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      middleware: [guessLimit(limiter)],
      method: "get",
      path: "/{studyKey}/code-lists/has-code",
      tags: ["participant-studies"],
      summary: "Whether a study code list holds a code (public, CASE)",
      description:
        "case-backend's studyHasCodeListCode: `{exists}` for `code` in the study's list `listKey` (both required: " +
        "400). No token, as in case-backend; rate-limited per address (60 checks in 15 minutes), since a public " +
        "check of a code's validity invites guessing. An unknown study is 404 (case-backend answers `exists: false`).",
      request: { params: studyKeyParam, query: codeQuery },
      responses: {
        200: jsonContent(z.object({ exists: z.boolean() }), "whether the list holds the code"),
        ...errorResponses([400, 404, 429], {
          400: "code or listKey missing, or instanceID names another instance",
          404: "study not found",
          429: "too many checks from this address",
        }),
      },
    },
    async (c) => {
      const { instanceID, listKey, code } = c.req.valid("query");
      checkInstanceId(deps.config, instanceID);
      const exists = await studyCodeExists(db, c.req.valid("param").studyKey, listKey, code);
      return c.json({ exists }, 200);
    },
  );
}
