import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, updateStudy } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat/case-route";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

export function registerIsDefault(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  caseRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/is-default",
      tags: ["studies"],
      summary: "Make a study the system default study, or not (CASE)",
      description:
        "Sets `props.systemDefaultStudy`: participant apps enter every profile of a new account into the default " +
        "study. Audited (`study.props.update`). Requires `update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      body: z.object({ isDefault: z.boolean({ error: "isDefault: must be a boolean" }) }),
      responses: {
        200: jsonContent(messageSchema, "the flag is set"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      const { isDefault } = c.req.valid("json");
      await updateStudy(db, studyKey, { systemDefaultStudy: isDefault }, who.subject);
      return c.json({ message: "study is-default updated" }, 200);
    },
  );
}
