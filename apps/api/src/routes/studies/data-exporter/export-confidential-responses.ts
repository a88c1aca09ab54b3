import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import { findConfidentialResponses } from "@studyflow/domain/participant-data";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import {
  caseConfidentialEntrySchema,
  presentCaseConfidentialEntries,
} from "@studyflow/presenters/case-confidential-response";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

/**
 * Participants per request. case-admin sends the ids pasted into a text box; a few thousand is a
 * large study's worth, and bounds the query's IN list and the answer.
 */
const MAX_PARTICIPANTS = 5_000;

const confidentialResponsesBody = z.object({
  participantIDs: z
    .array(
      z.string().min(1, "participant ids must not be empty").max(200, "a participant id is longer than 200 characters"),
    )
    .max(MAX_PARTICIPANTS, `at most ${MAX_PARTICIPANTS} participantIDs`)
    .optional(),
  keyFilter: z.string().max(200, "keyFilter is longer than 200 characters").optional(),
});

export function registerExportConfidentialResponses(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/confidential-responses/",
      tags: ["data-exporter"],
      summary: "Read the confidential responses of given participants (CASE)",
      description:
        "Confidential items of responses are stored apart, under an id derived from the participant id; this " +
        "returns them for the participant ids given, one entry per answer slot, in CASE's shape. Requires " +
        "`get-confidential-responses`: `get-responses` does not suffice.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: confidentialResponsesBody,
      bodyDescription: "`participantIDs` (required, not empty) and an optional `keyFilter` (one confidential key)",
      responses: {
        200: jsonContent(z.object({ responses: z.array(caseConfidentialEntrySchema) }), "the entries"),
        ...errorResponses([400, 401, 403, 404, 413], {
          400: "participantIDs missing or empty, or the body is not valid JSON",
          404: "study not found",
        }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-confidential-responses");
      const { participantIDs = [], keyFilter = "" } = c.req.valid("json");
      if (participantIDs.length === 0) throw new Invalid("participantIDs is required");
      const records = await findConfidentialResponses(db, studyKey, participantIDs, keyFilter);
      return c.json({ responses: records.flatMap(presentCaseConfidentialEntries) }, 200);
    },
  );
}
