import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { removeProfile } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import { presentWarnings, warningsField } from "@studyflow/presenters/rule-failure";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, profileIdField, submittedResponseSchema } from "../schemas";

const body = caseJsonBody(
  z.object({
    profileId: profileIdField,
    exitSurveyResponse: submittedResponseSchema.nullish(),
  }),
  "`profileId` of one of the account's profiles, not the main one; an optional `exitSurveyResponse`",
);

const route = createRoute({
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
  middleware: [body.middleware] as const,
  request: { body: body.body },
  responses: {
    200: jsonContent(z.object({ message: z.string(), ...warningsField }), "the profile is gone"),
    ...errorResponses([400, 401, 404, 409, 422], {
      400: "invalid body, or the main profile",
      404: "the account has no profile with this id",
      409: "a participant of the profile changed meanwhile, or a study became inactive; retry",
      422: "a strict study's LEAVE rules failed: nothing was removed",
    }),
  },
});

export function registerRemoveProfile(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { profileId, exitSurveyResponse } = c.req.valid("json");
    const removed = await removeProfile(
      db,
      { userId: participantOf(c).userId, profileId, exitSurveyResponse: exitSurveyResponse ?? null },
      domainContext(deps),
    );
    return c.json({ message: "profile removed", warnings: presentWarnings(removed.warnings) }, 200);
  });
}
