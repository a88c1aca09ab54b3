import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { ResponseItem } from "@studyflow/engine";
import { assertStudyPermission, submitResponse } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { domainContext } from "../../domain-context";
import {
  assignedSurveySchema,
  participantSchema,
  presentAssignedSurveys,
  presentParticipant,
} from "../../presenters/participant";
import { presentWarnings, warningsField } from "../../presenters/rule-failure";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, keyString } from "../schemas";

// A named component, so the OpenAPI generator can refer to the recursive shape instead of expanding it forever.
const responseItem: z.ZodType<ResponseItem> = z
  .lazy(() =>
    z.object({
      key: z.string(),
      value: z.string().optional(),
      dtype: z.string().optional(),
      items: z.array(responseItem).optional(),
    }),
  )
  .openapi("ResponseItem");

const surveyItemResponse = z.object({
  key: z.string().min(1, "response item key must not be empty"),
  meta: z.unknown().optional(),
  response: responseItem.optional(),
  confidentialMode: z.string().optional(),
  mapToKey: z.string().optional(),
});

const unixSeconds = z.number().int().min(0).max(253_402_300_799);

const submittedResponseSchema = z
  .object({
    key: keyString("key").openapi({ description: "survey key", example: "intake" }),
    versionId: z.string().max(200).optional(),
    openedAt: unixSeconds.optional(),
    submittedAt: unixSeconds.optional(),
    responses: z.array(surveyItemResponse).max(10_000).optional(),
    context: z.record(z.string(), z.string()).optional(),
  })
  .openapi("SurveyResponse");

const route = createRoute({
  method: "post",
  path: "/{participantID}/responses",
  tags: ["participants"],
  summary: "Submit a survey response on behalf of a participant",
  description:
    "Runs the study's rules with a SUBMIT event and stores the response, its confidential items, reports and " +
    "messages in one transaction. Requires the `edit-participant-data` permission for the study.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: z.object({
      studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" } }),
      participantID: z
        .string()
        .min(1)
        .max(200)
        .openapi({ param: { name: "participantID", in: "path" } }),
    }),
    body: jsonBody(submittedResponseSchema),
  },
  responses: {
    200: jsonContent(
      z.object({
        message: z.string(),
        result: z.array(assignedSurveySchema),
        participant: participantSchema,
        ...warningsField,
      }),
      "response stored; the participant's surveys and state after the rules",
    ),
    ...errorResponses([400, 401, 403, 404, 409, 422], {
      400: "invalid body",
      404: "study or participant not found",
      409: "study not active, or participant takes no responses",
      422: "the study's rules failed for this response; nothing was stored",
    }),
  },
});

export function registerSubmitResponse(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  router.openapi(route, async (c) => {
    const { studyKey, participantID } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(deps.database.db, who, studyKey, "edit-participant-data");
    const outcome = await submitResponse(
      deps.database.db,
      { studyKey, participantId: participantID, response: c.req.valid("json"), submittedBy: who.subject },
      domainContext(deps),
    );
    return c.json(
      {
        message: "response submitted",
        result: presentAssignedSurveys(outcome.participant),
        participant: presentParticipant(outcome.participant),
        warnings: presentWarnings(outcome.warnings),
      },
      200,
    );
  });
}
