import { z } from "@hono/zod-openapi";
import { assertPermission } from "@studyflow/domain/access";
import { caseStudyStats, getStudyOverview, updateStudy } from "@studyflow/domain/study-config";
import { createStudy } from "@studyflow/domain/study-setup";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { caseAdminStudySchema, presentCaseAdminStudy } from "@studyflow/presenters/case-study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, keyString } from "../schemas";

/** Shortest study secret: it keys the HMAC that derives participant ids (case-backend takes 5 characters). */
export const MIN_STUDY_SECRET_LENGTH = 16;

export function registerCreateStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      bothSlashes: true,
      tags: ["studies"],
      summary: "Create a study (CASE)",
      description:
        "case-backend's `POST /v1/studies`: a new study, inactive, that refuses participant uploads until its " +
        "file-upload config allows them. `secretKey` keys the derivation of participant ids and never leaves the " +
        `server; studyflow asks for at least ${MIN_STUDY_SECRET_LENGTH} characters (case-backend: 5). Recorded in ` +
        "the audit log (`study.create`). Requires `create-study` for study `*`.",
      security: MANAGEMENT_SECURITY,
      caseBody: z.object({
        studyKey: keyString("studyKey"),
        secretKey: z
          .string({ error: "secretKey: required" })
          .min(MIN_STUDY_SECRET_LENGTH, `secretKey: at least ${MIN_STUDY_SECRET_LENGTH} characters`)
          .max(500, "secretKey: at most 500 characters"),
        isSystemDefaultStudy: z.boolean().optional(),
      }),
      responses: {
        201: jsonContent(z.object({ study: caseAdminStudySchema }), "the new study"),
        ...errorResponses([400, 401, 403, 409], { 409: "a study with this key exists" }),
      },
    },
    async (c) => {
      const who = managementOf(c);
      await assertPermission(db, who, { resourceType: "study", resourceKeys: ["*"], action: "create-study" });
      const { studyKey, secretKey, isSystemDefaultStudy } = c.req.valid("json");
      await db.transaction(async (tx) => {
        await createStudy(tx, { key: studyKey, secret: secretKey, status: "inactive", createdBy: who.subject });
        if (isSystemDefaultStudy === true) {
          await updateStudy(tx, studyKey, { systemDefaultStudy: true }, who.subject, deps);
        }
      });
      const overview = await getStudyOverview(db, studyKey);
      return c.json(
        { study: presentCaseAdminStudy(overview, await caseStudyStats(db, studyKey, new Date(deps.clock()))) },
        201,
      );
    },
  );
}
