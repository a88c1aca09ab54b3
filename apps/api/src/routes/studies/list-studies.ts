import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { listVisibleStudies } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import { presentStudy, studySchema } from "../../presenters/study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";

const route = createRoute({
  method: "get",
  path: "/",
  tags: ["studies"],
  summary: "The studies the caller may see",
  description:
    "Admins see every study; anyone else the studies they hold any permission for (a permission for study `*` " +
    "shows all). Each with its status, properties, rule settings and current rules version, by key.",
  security: MANAGEMENT_SECURITY,
  responses: {
    200: jsonContent(z.object({ studies: z.array(studySchema) }), "the visible studies, by key"),
    ...errorResponses([401]),
  },
});

export function registerListStudies(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  router.openapi(route, async (c) => {
    const overviews = await listVisibleStudies(deps.database.db, managementOf(c));
    return c.json({ studies: overviews.map(presentStudy) }, 200);
  });
}
