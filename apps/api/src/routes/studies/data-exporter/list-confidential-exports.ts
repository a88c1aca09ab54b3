import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

export function registerListConfidentialExports(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/confidential-responses/",
      tags: ["data-exporter"],
      summary: "Prepared confidential-response files of the study (CASE); studyflow prepares none",
      description:
        "CASE lists files its daily job wrote beside the response exports. studyflow has no daily confidential " +
        "export — confidential responses are read on demand with POST …/confidential-responses — so the list is " +
        "always empty. Requires `get-confidential-responses` (`get-responses` is not enough).",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      responses: {
        200: jsonContent(z.object({ availableFiles: z.array(z.string()) }), "the file names (none)"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      await assertStudyPermission(db, managementOf(c), studyKey, "get-confidential-responses");
      await getStudy(db, studyKey);
      return c.json({ availableFiles: [] as string[] }, 200);
    },
  );
}
