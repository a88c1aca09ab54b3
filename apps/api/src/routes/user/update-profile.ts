import { z } from "@hono/zod-openapi";
import { updateProfile } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { caseProfileInput, presentProfile, profileChangesOf, profileEnvelope } from "./case-user-schema";

const updateProfileRequest = caseProfileInput.extend({
  id: z.string().min(1, "id is required").max(200, "id is longer than 200 characters"),
});

export function registerUpdateProfile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/profiles",
      tags: ["user"],
      summary: "Change one of the account's profiles (CASE)",
      description: "Alias, avatar and consent time; whether the profile is the main one does not change.",
      security: PARTICIPANT_SECURITY,
      caseBody: updateProfileRequest,
      bodyDescription:
        "CASE's Profile: `id` names one of the account's profiles; `alias`, `avatarID`, `consentConfirmedAt` are set " +
        "(an absent one stays as it is); `mainProfile` and `createdAt` are the server's",
      responses: {
        200: jsonContent(profileEnvelope, "the profile as stored"),
        ...errorResponses([400, 401, 404], { 404: "the account has no profile with this id" }),
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      const updated = await updateProfile(db, participantOf(c).userId, input.id, profileChangesOf(input));
      return c.json(presentProfile(updated), 200);
    },
  );
}
