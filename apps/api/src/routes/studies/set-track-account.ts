import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getStudyOverview, updateStudy } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

export function registerSetTrackAccount(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/track-account",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Switch account tracking on or off for a study",
      description:
        "With tracking on, participants created from a profile store an HMAC of the account id and the main-profile " +
        "flag. The body is read as case-admin sends it (any Content-Type, keys in any case). An absent " +
        "`trackAccount` leaves the flag unchanged. A change is recorded in the audit log " +
        "(`study.track-account.update`); `PATCH /v1/studies/{studyKey}` sets the flag as well. Requires " +
        "`update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({ trackAccount: z.boolean({ error: "trackAccount must be a boolean" }).optional() }),
      responses: {
        200: jsonContent(messageSchema, "the resulting value of the flag"),
        ...errorResponses([400, 401, 403, 404], {
          400: "trackAccount is not a boolean",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      const { trackAccount } = c.req.valid("json");
      const { study } =
        trackAccount === undefined
          ? await getStudyOverview(db, studyKey)
          : await updateStudy(db, studyKey, { trackAccount }, who.subject, deps);
      return c.json(
        { message: `account tracking is ${study.trackAccount ? "on" : "off"} for study "${studyKey}"` },
        200,
      );
    },
  );
}
