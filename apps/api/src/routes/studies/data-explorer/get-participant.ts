import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getExplorerParticipant } from "@studyflow/domain/data-explorer";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { idParam, studyKeyField } from "./explorer-query";

export function registerGetParticipant(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participants/{participantID}",
      tags: ["data-explorer"],
      summary: "One participant's state",
      description: "Requires `get-participant-states`.",
      security: MANAGEMENT_SECURITY,
      request: { params: z.object({ studyKey: studyKeyField, participantID: idParam("participantID") }) },
      responses: {
        200: jsonContent(z.object({ participant: participantSchema }), "the participant"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found, or no such participant in it" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-participant-states");
      return c.json(
        { participant: presentParticipant(await getExplorerParticipant(db, studyKey, participantID)) },
        200,
      );
    },
  );
}
