import { z } from "@hono/zod-openapi";
import { assertProfileOfUser } from "@studyflow/domain/access";
import { getSurveyWithContextForProfile } from "@studyflow/domain/survey-context";
import { loggerOf, participantOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { domainContext } from "../../../domain-context";
import { presentSurveyWithContext, surveyWithContextEnvelope } from "@studyflow/presenters/survey-with-context";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, studyKeyParam, surveyKeyField } from "../../schemas";

const query = z.object({
  pid: z
    .string({ error: "pid is required (the profile id)" })
    .min(1, "pid is required (the profile id)")
    .max(200, "pid is longer than 200 characters")
    .openapi({ param: { name: "pid", in: "query" }, description: "one of the signed-in user's profile ids" }),
});

/** GET /{studyKey}/survey/{surveyKey}?pid= */
export function registerSurveyWithContext(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/survey/{surveyKey}",
      tags: ["participant-data"],
      summary: "A survey with its context and prefill, for a profile's participant (CASE)",
      description:
        "case-backend's getSurveyWithContext: the survey's current version (without its contextRules and " +
        "prefillRules), the context it is rendered with (participant flags, every study variable, the mode of the " +
        "survey's contextRules) and the answers it starts with, from its prefillRules (PREFILL_SLOT_WITH_VALUE; " +
        "PREFILL_ITEM_WITH_LAST_RESPONSE, optionally only from a response that arrived after its time filter). " +
        "Prefilled items the current version no longer has are left out. Whom it opens for follows the survey's " +
        "`availableFor`: `public` also for a profile that is not a participant yet; `participants_if_assigned` " +
        "only when assigned and valid now. Reads only. A prefill rule that cannot apply is skipped (and logged) " +
        "where case-backend fails the whole request.",
      security: PARTICIPANT_SECURITY,
      request: { params: studyKeyParam.extend({ surveyKey: surveyKeyField }), query },
      responses: {
        200: jsonContent(surveyWithContextEnvelope, "the survey with its context and prefill"),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "pid missing",
          403: "the profile is not the signed-in user's, or the survey is for assigned participants and not assigned",
          404: "study not found, no published version of the survey, or the profile is not a participant",
          409: "study not active",
        }),
      },
    },
    async (c) => {
      const { studyKey, surveyKey } = c.req.valid("param");
      const profile = await assertProfileOfUser(db, participantOf(c).userId, c.req.valid("query").pid);
      const result = await getSurveyWithContextForProfile(
        db,
        { studyKey, surveyKey, profileId: profile.id },
        domainContext(deps),
      );
      if (result.problems.length > 0) {
        loggerOf(c).warn({ studyKey, surveyKey, problems: result.problems }, "survey context or prefill rules skipped");
      }
      return c.json(presentSurveyWithContext(result), 200);
    },
  );
}
