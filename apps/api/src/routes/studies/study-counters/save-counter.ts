import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { saveStudyCounter } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../schemas";
import { counterParams, counterValueSchema } from "./counter-params";

export function registerSaveCounter(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{scope}",
      bothSlashes: true,
      tags: ["study-counters"],
      summary: "Set a study counter (CASE)",
      description:
        "Creates the counter or sets its value. Recorded in the audit log (`study-counter.set`, with the value " +
        "before). Requires `manage-study-counters`.",
      security: MANAGEMENT_SECURITY,
      request: { params: counterParams },
      caseBody: z
        .object({
          value: z
            .number({ error: "value: must be a whole number" })
            .int("value: must be a whole number")
            .min(Number.MIN_SAFE_INTEGER, "value: too small")
            .max(Number.MAX_SAFE_INTEGER, "value: too large")
            .optional(),
        })
        .openapi("StudyCounterSave"),
      responses: {
        200: jsonContent(counterValueSchema, "the counter's value"),
        ...errorResponses([400, 401, 403, 404], { 400: "a blank scope or a value that is not a whole number" }),
      },
    },
    async (c) => {
      const { studyKey, scope } = c.req.valid("param");
      // case-backend binds an absent value as 0
      const { value = 0 } = c.req.valid("json");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-counters");
      const saved = await saveStudyCounter(db, studyKey, scope, value, who.subject);
      return c.json({ value: saved.value }, 200);
    },
  );
}
