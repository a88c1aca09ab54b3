import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { updateStudy } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

export function registerSetIsDefault(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/is-default",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Make a study the system default study, or not (CASE)",
      description:
        "Sets `props.systemDefaultStudy`: participant apps enter every profile of a new account into the default " +
        "study. Audited (`study.props.update`). Requires `update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({ isDefault: z.boolean({ error: "isDefault: must be a boolean" }) }),
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
      await updateStudy(db, studyKey, { systemDefaultStudy: isDefault }, who.subject, deps);
      return c.json({ message: "study is-default updated" }, 200);
    },
  );
}
