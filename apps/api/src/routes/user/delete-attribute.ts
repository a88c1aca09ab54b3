import { z } from "@hono/zod-openapi";
import { deleteUserAttribute } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

const params = z.object({
  attributeID: z
    .string()
    .min(1, "attributeID is required")
    .max(100, "attributeID is longer than 100 characters")
    .openapi({ param: { name: "attributeID", in: "path" }, example: "6650a1f2c3d4e5f6a7b8c9d0" }),
});

export function registerDeleteAttribute(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "delete",
      path: "/attributes/{attributeID}",
      tags: ["user"],
      summary: "Delete one of the account's attribute documents (CASE)",
      description:
        "case-backend's deleteUserAttribute, by the document's `id`. An id that is not one of the signed-in " +
        "account's documents (unknown, or another account's) is 404 and nothing is deleted; case-backend answers " +
        "200 whether it deleted anything or not (500 for an id that is no ObjectId).",
      security: PARTICIPANT_SECURITY,
      request: { params },
      responses: {
        200: jsonContent(messageSchema, "the document is deleted"),
        ...errorResponses([400, 401, 404], { 404: "no such document of this account" }),
      },
    },
    async (c) => {
      await deleteUserAttribute(db, participantOf(c).userId, c.req.valid("param").attributeID);
      return c.json({ message: "user attribute deleted" }, 200);
    },
  );
}
