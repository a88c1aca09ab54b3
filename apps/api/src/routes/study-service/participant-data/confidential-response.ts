import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { findConfidentialResponses, participantIdOfProfile } from "@studyflow/domain/participant-data";
import { getStudy } from "@studyflow/domain/studies";
import { participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import {
  caseConfidentialEntrySchema,
  presentCaseConfidentialEntries,
} from "@studyflow/presenters/case-confidential-response";

import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { PARTICIPANT_SECURITY, jsonContent } from "../../schemas";
import { profileDataErrors, pidKeyQuery, studyParams } from "./profile-query";

export function registerConfidentialResponse(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/confidential-response",
      tags: ["participant-data"],
      summary: "A profile's own confidential responses under one key (CASE)",
      description:
        "The confidential responses the profile's participant gave under `key` (required: one confidential key per " +
        "request, as case-backend), one entry per answer slot as CASE's confidential export lists them. Only the " +
        "profile's own: they are found by its confidential id, which derives from its participant id.",
      security: PARTICIPANT_SECURITY,
      request: {
        params: studyParams,
        query: pidKeyQuery("email"),
      },
      responses: {
        200: jsonContent(z.object({ confidentialResponse: z.array(caseConfidentialEntrySchema) }), "the entries"),
        ...profileDataErrors("pid or key missing"),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, query.pid);
      const participantId = participantIdOfProfile(await getStudy(db, studyKey), profile.id);
      const records = await findConfidentialResponses(db, studyKey, [participantId], query.key);
      return c.json({ confidentialResponse: records.flatMap(presentCaseConfidentialEntries) }, 200);
    },
  );
}
