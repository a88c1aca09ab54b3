import { z } from "@hono/zod-openapi";
import { removeProfile } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, submittedResponseSchema } from "../schemas";

const removeProfileRequest = z.object({
  profileId: profileIdField,
  exitSurveyResponse: submittedResponseSchema.nullish(),
});

export function registerRemoveProfile(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/profiles/remove",
      tags: ["user"],
      summary: "Remove one of the account's profiles (CASE)",
      description:
        "In one transaction: in every study the profile takes part in, the exit survey response (if given) is " +
        "stored in the system default studies (as case-backend) and in a study that has a survey of its key, the " +
        "participant leaves (status `exited`, the LEAVE rules run, confidential responses removed) and ends as " +
        "`accountDeleted`; then the profile is deleted. The main profile cannot be removed.",
      security: PARTICIPANT_SECURITY,
      caseBody: removeProfileRequest,
      bodyDescription:
        "`profileId` of one of the account's profiles, not the main one; an optional `exitSurveyResponse`",
      responses: {
        200: jsonContent(z.object({ message: z.string(), ...warningsField }), "the profile is gone"),
        ...errorResponses([400, 401, 404, 409, 422], {
          400: "invalid body, or the main profile",
          404: "the account has no profile with this id",
          409: "a participant of the profile changed meanwhile, or a study became inactive; retry",
          422: "a strict study's LEAVE rules failed: nothing was removed",
        }),
      },
    },
    async (c) => {
      const { profileId, exitSurveyResponse } = c.req.valid("json");
      const removed = await removeProfile(
        db,
        { userId: participantOf(c).userId, profileId, exitSurveyResponse: exitSurveyResponse ?? null },
        domainContext(deps),
      );
      return c.json({ message: "profile removed", warnings: presentWarnings(removed.warnings) }, 200);
    },
  );
}
