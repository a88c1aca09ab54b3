import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { getOwnLinkingCode } from "@studyflow/domain/participant-data";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { FORBIDDEN_PROFILE, pidKeyQuery, studyParams } from "./profile-query";

export function registerLinkingCode(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/linking-code",
      tags: ["participant-data"],
      summary: "One of a profile's linking codes (CASE)",
      description:
        'The value of the profile\'s linking code under `key` (required), "" when it has none, as case-backend ' +
        "answers. One key per request: the codes are never listed.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyParams,
        query: pidKeyQuery("panel"),
      },
      responses: {
        200: jsonContent(z.object({ linkingCode: z.string() }), "the code's value"),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "pid or key missing",
          403: FORBIDDEN_PROFILE,
          404: "study not found, or the profile is no participant of it",
          409: "study not active",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, query.pid);
      return c.json({ linkingCode: await getOwnLinkingCode(db, studyKey, profile.id, query.key) }, 200);
    },
  );
}
