import { z } from "@hono/zod-openapi";
import { MAX_USER_ATTRIBUTE_TYPES, setUserAttribute } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

const setAttributeRequest = z.object({
  // Checked by the domain (required, not blank, its length), as case-backend reads an absent type as "".
  type: z.string().max(1_000, "type is too long").optional(),
  attributes: z.record(z.string(), z.unknown()).nullable().optional(),
});

export function registerSetAttribute(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "post",
      path: "/attributes",
      tags: ["user"],
      summary: "Create or replace one of the account's attribute documents (CASE)",
      description:
        "case-backend's setUserAttribute: the document of this `type` (required, at most 100 characters) is " +
        "created, or replaced whole, with `attributes` (an object of the app's own keys, at most 16 KB of JSON; " +
        `absent or null stores null), its write time now. An account holds at most ${MAX_USER_ATTRIBUTE_TYPES} ` +
        "types: a new one beyond that is 409 (case-backend has no bound).",
      security: PARTICIPANT_SECURITY,
      caseBody: setAttributeRequest,
      bodyDescription: "`type` and `attributes`, as case-backend's UserAttributeReqPayload",
      responses: {
        200: jsonContent(messageSchema, "the document is stored"),
        ...errorResponses([400, 401, 409], {
          400: "no body, type missing, blank or too long, attributes not an object or too large",
          409: `the account holds ${MAX_USER_ATTRIBUTE_TYPES} types already`,
        }),
      },
    },
    async (c) => {
      const body = c.req.valid("json");
      await setUserAttribute(
        db,
        participantOf(c).userId,
        { type: body.type ?? "", attributes: body.attributes ?? null },
        new Date(clock()),
      );
      return c.json({ message: "user attribute set" }, 200);
    },
  );
}
