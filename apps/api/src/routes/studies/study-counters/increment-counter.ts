import { assertStudyPermission } from "@studyflow/domain/access";
import { incrementStudyCounter } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { counterParams, counterValueSchema } from "./counter-params";

export function registerIncrementCounter(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{scope}",
      bothSlashes: true,
      tags: ["study-counters"],
      summary: "Increment a study counter (CASE)",
      description:
        "Adds 1 (a counter that does not exist becomes 1); no body. Recorded in the audit log " +
        "(`study-counter.increment`, with the new value). Requires `manage-study-counters`.",
      security: MANAGEMENT_SECURITY,
      request: { params: counterParams },
      responses: {
        200: jsonContent(counterValueSchema, "the counter's new value"),
        ...errorResponses([400, 401, 403, 404], { 400: "a blank scope" }),
      },
    },
    async (c) => {
      const { studyKey, scope } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-counters");
      const saved = await incrementStudyCounter(db, studyKey, scope, who.subject);
      return c.json({ value: saved.value }, 200);
    },
  );
}
