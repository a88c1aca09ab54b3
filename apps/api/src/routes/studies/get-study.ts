import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyVisible, getStudyOverview } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentStudy, studySchema } from "../../presenters/study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

const route = createRoute({
  method: "get",
  path: "/{studyKey}",
  tags: ["studies"],
  summary: "A study's status, properties, rule settings and current rules version",
  description: "Requires any permission for the study.",
  security: MANAGEMENT_SECURITY,
  request: { params: studyKeyParam },
  responses: {
    200: jsonContent(z.object({ study: studySchema }), "the study"),
    ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
  },
});

export function registerGetStudy(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    await assertStudyVisible(db, managementOf(c), studyKey);
    return c.json({ study: presentStudy(await getStudyOverview(db, studyKey)) }, 200);
  });
}
