import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { updateParticipantReport } from "@studyflow/domain/participants";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { caseReportSchema, presentCaseReport } from "../data-explorer/present";
import { participantParams } from "./participant-params";
import { reportDataSchema, storedReportData } from "./report-data";

/** case-backend's UpdateParticipantReportRequest. */
const updateReportRequest = z.object({
  data: reportDataSchema.nullish(),
  mode: z
    .enum(["append", "replace", ""], { error: 'mode must be "append" or "replace"' })
    .nullish()
    .openapi({ description: "append (default): the entries join the report's data; replace: they become it" }),
});

export function registerUpdateReport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      caseBody: updateReportRequest,
      method: "put",
      path: "/{participantID}/reports/{reportID}",
      tags: ["participants"],
      summary: "Append to or replace a participant's report data",
      description:
        "`mode` `append` (the default) adds the entries to the report's data, `replace` makes them its data. A " +
        "report that is not this participant's in this study is a 404 (case-backend: 500). Answers the report " +
        "as stored. Audited (`report.update`). Requires `edit-participant-data`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: participantParams.extend({
          reportID: z
            .string()
            .min(1)
            .max(200)
            .openapi({ param: { name: "reportID", in: "path" } }),
        }),
      },
      responses: {
        200: jsonContent(z.object({ message: z.string(), report: caseReportSchema }), "report updated"),
        ...errorResponses([400, 401, 403, 404], {
          400: "invalid body: data entries not key/value strings, or an unknown mode",
          404: "study not found, or no such report of the participant",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID, reportID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "edit-participant-data");
      const body = c.req.valid("json");
      const report = await updateParticipantReport(
        db,
        {
          studyKey,
          participantId: participantID,
          reportId: reportID,
          data: storedReportData(body.data),
          mode: body.mode === "replace" ? "replace" : "append",
          actor: who.subject,
        },
        new Date(deps.clock()),
      );
      return c.json({ message: "report updated", report: presentCaseReport(report) }, 200);
    },
  );
}
