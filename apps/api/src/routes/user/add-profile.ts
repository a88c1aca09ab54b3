import { MAX_PROFILES_PER_USER, addProfile } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { caseProfileInput, presentProfile, profileChangesOf, profileEnvelope } from "./case-user-schema";

export function registerAddProfile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/profiles",
      tags: ["user"],
      summary: "Add a profile to the account (CASE)",
      description:
        `A new profile is never the main one. An account holds at most ${MAX_PROFILES_PER_USER} profiles ` +
        "(case-backend answers 500 at its limit; studyflow 409).",
      security: PARTICIPANT_SECURITY,
      caseBody: caseProfileInput,
      bodyDescription:
        "CASE's Profile: `alias`, `avatarID`, `consentConfirmedAt` are taken; `id`, `mainProfile` and `createdAt` are the server's",
      responses: {
        200: jsonContent(profileEnvelope, "the new profile"),
        ...errorResponses([400, 401, 409], { 409: `the account holds ${MAX_PROFILES_PER_USER} profiles already` }),
      },
    },
    async (c) => {
      const created = await addProfile(db, participantOf(c).userId, profileChangesOf(c.req.valid("json")));
      return c.json(presentProfile(created), 200);
    },
  );
}
