import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import { listSubscriptions } from "@studyflow/domain/notifications";
import { getStudy } from "@studyflow/domain/studies";
import { getRulesVersion } from "@studyflow/domain/study-config";
import { currentSurveyVersion, listSurveys } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentCaseStudy, presentCaseStudyRules, presentCaseSurvey } from "@studyflow/presenters/case-study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { attachmentHeader } from "../../download";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";

/** `true` or `false` as case-admin sends them; anything else is a mistake worth a 400, not a silent false. */
const includeFlag = (name: string, what: string) =>
  z
    .enum(["true", "false"], { error: `${name} must be "true" or "false"` })
    .optional()
    .openapi({ description: `include ${what} (default false)` });

/** Which parts the file holds. */
const exportConfigQuery = z.object({
  config: includeFlag("config", "the study document"),
  surveys: includeFlag("surveys", "the current version of each survey"),
  rules: includeFlag("rules", "the current rules"),
});

/** The file: the parts asked for, with the time it was made. */
const studyConfigExportSchema = z
  .object({
    exportedAt: z.string().openapi({ format: "date-time" }),
    config: z.record(z.string(), z.unknown()).optional(),
    rules: z.record(z.string(), z.unknown()).optional(),
    surveys: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .openapi("CaseStudyConfigExport");

/** GET /v1/studies/{studyKey}/export-config: the study's configuration as one downloadable JSON file. */
export function registerExportStudyConfig(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: ["data-exporter"],
      summary: "Download the study's configuration, current rules and current surveys as one JSON file (CASE)",
      description:
        "CASE's export-config: `{exportedAt, config?, rules?, surveys?}` as an attachment named " +
        "`study_config_<studyKey>_<YYYY-MM-DD>.json`. `config` is CASE's Study document (studyflow's own settings in " +
        "`studyflowConfig`; the study secret is never included), `rules` the current rules (absent when the study has " +
        "none), `surveys` the current version of every published survey. At least one of `config`, `surveys`, " +
        "`rules` must be true. Requires `read-study-config`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: exportConfigQuery,
      },
      responses: {
        200: {
          description: "the configuration file",
          content: {
            "application/json": {
              schema: studyConfigExportSchema,
            },
          },
        },
        ...errorResponses([400, 401, 403, 404], {
          400: "none of config, surveys, rules is true, or one is not true/false",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "read-study-config");
      const include = {
        config: query.config === "true",
        surveys: query.surveys === "true",
        rules: query.rules === "true",
      };
      if (!include.config && !include.surveys && !include.rules) {
        throw new Invalid("at least one of the following query parameters must be set: config, surveys, rules");
      }
      const study = await getStudy(db, studyKey);
      const now = new Date(deps.clock());
      const document: Record<string, unknown> = { exportedAt: now.toISOString() };
      if (include.config) document["config"] = presentCaseStudy(study, await listSubscriptions(db, studyKey));
      if (include.rules) {
        try {
          document["rules"] = presentCaseStudyRules(studyKey, await getRulesVersion(db, studyKey, "current"));
        } catch (error) {
          // A study without rules exports without them, as CASE does; other failures are failures.
          if (!(error instanceof NotFound)) throw error;
        }
      }
      if (include.surveys) {
        const surveys = [];
        for (const summary of await listSurveys(db, studyKey)) {
          if (summary.currentVersionId === null) continue; // unpublished: no current version to export
          const version = await currentSurveyVersion(db, studyKey, summary.surveyKey);
          if (version) surveys.push(presentCaseSurvey(version));
        }
        document["surveys"] = surveys;
      }
      const fileName = `study_config_${studyKey}_${now.toISOString().slice(0, 10)}.json`;
      c.header("Content-Disposition", attachmentHeader(fileName));
      c.header("Cache-Control", "private, no-store");
      return c.json(document as never, 200);
    },
  );
}
