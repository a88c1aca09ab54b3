import { z } from "@hono/zod-openapi";
import { listUserAttributes } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { caseUserAttributesSchema, presentCaseUserAttributes } from "./user-attribute-schema";

export function registerListAttributes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/attributes",
      tags: ["user"],
      summary: "The account's attribute documents (CASE)",
      description:
        "case-backend's getUserAttributes: every attributes document of the signed-in account (one per `type`), " +
        "sorted by type; `[]` when there are none (case-backend answers `null`).",
      security: PARTICIPANT_SECURITY,
      responses: {
        200: jsonContent(z.object({ attributes: z.array(caseUserAttributesSchema) }), "the documents"),
        ...errorResponses([401]),
      },
    },
    async (c) => {
      const documents = await listUserAttributes(db, participantOf(c).userId);
      return c.json({ attributes: documents.map(presentCaseUserAttributes) }, 200);
    },
  );
}
