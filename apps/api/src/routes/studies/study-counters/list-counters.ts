import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyCounters } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

const studyCounterSchema = z
  .object({ studyKey: z.string(), scope: z.string(), value: z.number().int() })
  .openapi("StudyCounter");

export function registerListCounters(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      bothSlashes: true,
      tags: ["study-counters"],
      summary: "A study's counters (CASE)",
      description: "By scope. Requires `read-study-config` or `manage-study-counters`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ values: z.array(studyCounterSchema) }), "the study's counters"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, ["read-study-config", "manage-study-counters"]);
      const counters = await listStudyCounters(db, studyKey);
      return c.json({ values: counters.map((counter) => ({ studyKey, ...counter })) }, 200);
    },
  );
}
