import { loadCaseUser } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { userEnvelope } from "./case-user-schema";

export function registerGetUser(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["user"],
      summary: "The signed-in participant's account (CASE)",
      description: "Account, profiles (main first), contact preferences and contact address, as CASE's `user`.",
      security: PARTICIPANT_SECURITY,
      // gin serves the group root at /v1/user/ (and /v1/user by redirect)
      bothSlashes: true,
      responses: {
        200: jsonContent(userEnvelope, "the account"),
        ...errorResponses([401, 404], { 404: "the account is gone" }),
      },
    },
    async (c) => c.json({ user: await loadCaseUser(db, participantOf(c).userId) }, 200),
  );
}
