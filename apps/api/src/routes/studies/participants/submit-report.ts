import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import { nowSeconds } from "@studyflow/domain/foundation";
import { submitParticipantReport } from "@studyflow/domain/participants";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { caseReportSchema, presentCaseReport } from "../data-explorer/present";
import { participantParams } from "./participant-params";
import { reportDataSchema, storedReportData } from "./report-data";

/** case-backend's Report, as a researcher's script sends it. */
const reportRequest = z.object({
  key: z
    .string({ error: "key must be a string" })
    .min(1, "key is required")
    .max(200, "key is longer than 200 characters"),
  participantID: z.string({ error: "participantID must be a string" }).max(200),
  responseID: z.string().max(200).nullish(),
  timestamp: z
    .number({ error: "timestamp must be a number" })
    .int("timestamp must be whole Unix seconds")
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .nullish()
    .openapi({ description: "Unix seconds; absent or 0: now" }),
  data: reportDataSchema.nullish(),
});

export function registerSubmitReport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: reportRequest,
      method: "post",
      path: "/{participantID}/reports",
      tags: ["participants"],
      summary: "Write a report for a participant",
      description:
        "Stores a CASE Report for the participant, as if a rule had written it (event type `MANAGEMENT`). " +
        "`participantID` must be the path's (400). A participant whose account was deleted takes no report " +
        "(400, as case-backend); an unknown one is a 404 (case-backend: 500). Answers the stored report too, so " +
        "its id can be used to update it. Audited (`report.create`). Requires `edit-participant-data`.",
      security: MANAGEMENT_SECURITY,
      request: { params: participantParams },
      responses: {
        200: jsonContent(z.object({ message: z.string(), report: caseReportSchema }), "report stored"),
        ...errorResponses([400, 401, 403, 404], {
          400: "invalid body, another participantID than the path's, or the participant's account was deleted",
          404: "study or participant not found",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "edit-participant-data");
      const body = c.req.valid("json");
      if (body.participantID !== participantID) throw new Invalid("invalid request: participantID is not the path's");
      const report = await submitParticipantReport(
        db,
        {
          studyKey,
          participantId: participantID,
          key: body.key,
          responseId: body.responseID ?? undefined,
          timestamp: body.timestamp || nowSeconds(deps),
          data: storedReportData(body.data),
          actor: who.subject,
        },
        new Date(deps.clock()),
      );
      return c.json({ message: "report submitted", report: presentCaseReport(report) }, 200);
    },
  );
}
