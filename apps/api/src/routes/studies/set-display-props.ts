import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { setCaseDisplayProps } from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, messageSchema, studyKeyParam } from "../schemas";

const localised = z
  .array(
    z.object({
      code: z.string().min(1, "must name a language").max(20),
      parts: z
        .array(z.object({ dtype: z.string().max(20).optional(), str: z.string().max(5_000).optional() }))
        .max(20)
        .default([]),
    }),
  )
  .max(50)
  .nullish()
  .transform((list) => list ?? []);

export function registerSetDisplayProps(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/{studyKey}/display-props",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Replace a study's name, description and tags (CASE)",
      description:
        'LocalisedObjects (`{code, parts: [{dtype: "str", str}]}`) per language; all three are replaced, an absent ' +
        "one removed, a blank text dropped. Tags keep their text per language; studyflow's plain `tags` (for its " +
        "own clients) hold each tag's English text, else its first. Audited (`study.props.update`). Requires " +
        "`update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: z.object({
        name: localised,
        description: localised,
        tags: z
          .array(z.object({ label: localised }))
          .max(50, "at most 50 tags")
          .nullish()
          .transform((list) => list ?? []),
      }),
      responses: {
        200: jsonContent(messageSchema, "the properties are replaced"),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      await setCaseDisplayProps(db, studyKey, c.req.valid("json"), who.subject, deps);
      return c.json({ message: "study display props updated" }, 200);
    },
  );
}
