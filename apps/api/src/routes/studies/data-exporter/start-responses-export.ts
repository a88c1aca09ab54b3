import { z } from "@hono/zod-openapi";
import { DEFAULT_QUESTION_OPTION_SEP, type IncludeMeta } from "@studyflow/case-export";
import { assertStudyPermission } from "@studyflow/domain/access";
import { parseCaseJsonParam } from "@studyflow/domain/case-filter";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import { countResponses, createResponseExportTask } from "@studyflow/domain/exports";
import { getStudy } from "@studyflow/domain/studies";
import { listSurveyVersions } from "@studyflow/domain/surveys";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { MANAGEMENT_SECURITY, studyKeyParam } from "../../schemas";
import { caseJsonQuery, goBoolQuery } from "./case-query";
import { startExportResponses } from "./export-contract";
import { EXPORT_GROUPS } from "./export-groups";
import { guardFormulasQuery, gzipQuery, startExport } from "./start-export";

const group = EXPORT_GROUPS.responses;

/** The meta columns a response export can add per question (studyflow's addition; CASE's API adds none). */
const META_FLAGS = [
  "position",
  "initTimes",
  "displayedTimes",
  "responsedTimes",
] as const satisfies readonly (keyof IncludeMeta)[];
/** Context columns beyond these are a mistake, not a wish. */
const MAX_EXTRA_COLUMNS = 50;

const commaList = (name: string, max: number) =>
  z
    .string()
    .max(2_000, `${name} is longer than 2000 characters`)
    .optional()
    .transform((value, ctx) => {
      const items = (value ?? "").split(",").filter((item) => item !== "");
      if (items.length > max) ctx.addIssue({ code: "custom", message: `${name}: at most ${max} entries` });
      return items;
    });

/** The export's options: all in the query, as case-admin sends them. */
const responsesExportQuery = z.object({
  surveyKey: z.string().max(200).optional().openapi({ description: "the survey (required)", example: "weekly" }),
  format: z
    .enum(["wide", "long", "json"], { error: 'format must be "wide", "long" or "json"' })
    .optional()
    .openapi({ description: "wide (default) and long are CSV; json is CASE's JSON export" }),
  questionOptionSep: z
    .string()
    .max(10, "questionOptionSep is longer than 10 characters")
    .optional()
    .openapi({
      description: `between a question key and its option in column names (default "${DEFAULT_QUESTION_OPTION_SEP}")`,
    }),
  shortKeys: goBoolQuery("shortKeys", "column names without the survey key prefix (default false)"),
  extraContextColumns: commaList("extraContextColumns", MAX_EXTRA_COLUMNS).openapi({
    type: "string",
    description: "comma-separated keys of the responses' context to add as columns",
    example: "engineVersion,language",
  }),
  includeMeta: commaList("includeMeta", META_FLAGS.length).openapi({
    type: "string",
    description: `studyflow's addition: comma-separated per-question meta columns to add: ${META_FLAGS.join(", ")}`,
  }),
  filter: caseJsonQuery(
    "filter",
    'CASE\'s Mongo-style filter, e.g. {"$and":[{"arrivedAt":{"$gt":1780000000}},{"arrivedAt":{"$lt":1780600000}}]}',
  ),
  sort: caseJsonQuery("sort", 'e.g. {"submittedAt":-1}; by submittedAt or arrivedAt (default CASE\'s order)'),
  gzip: gzipQuery,
  guardFormulas: guardFormulasQuery,
});

export function registerStartResponsesExport(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/responses/",
      tags: ["data-exporter"],
      summary: "Start an export of a survey's responses: CSV (wide or long) or JSON, as CASE writes them",
      description:
        "Everything is in the query, as case-admin sends it (no body). Records an export task and queues it; workers " +
        "write the file, `…/responses/task/{id}` follows it and `…/result` downloads it. The file is CASE's: columns, " +
        "order and encodings as case-backend writes them, except that CSV cells participants filled which a " +
        "spreadsheet would run as a formula get a `'` in front unless `guardFormulas=false`. When the study's track-account flag is on at export " +
        "time, two columns `accountID` (the participant's hashed account id, or empty) and `mainProfile` are added; " +
        'off, they never appear. When no response matches, the answer is 200 `{"error": "no responses to ' +
        `export"}\` and no task is made, as case-backend answers. Requires \`${group.permission}\`.`,
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: responsesExportQuery,
      },
      responses: startExportResponses(
        "response",
        "surveyKey missing or not a survey of the study, an unknown format, filter or sort not valid (the message names it)",
      ),
      bothSlashes: true,
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, group.permission);
      const surveyKey = query.surveyKey ?? "";
      if (surveyKey === "") throw new Invalid("surveyKey is required");
      const unknownMeta = query.includeMeta.find((flag) => !(META_FLAGS as readonly string[]).includes(flag));
      if (unknownMeta !== undefined) {
        throw new Invalid(`includeMeta: unknown "${unknownMeta}" (known: ${META_FLAGS.join(", ")})`);
      }
      const filter = parseCaseJsonParam("filter", query.filter);
      const sort = parseCaseJsonParam("sort", query.sort);
      await getStudy(db, studyKey);
      try {
        // The file's columns come from the survey's versions: a survey never uploaded cannot be exported.
        await listSurveyVersions(db, studyKey, surveyKey);
      } catch (error) {
        if (error instanceof NotFound) throw new Invalid(`surveyKey: no survey "${surveyKey}" in study "${studyKey}"`);
        throw error;
      }
      const includeMeta = Object.fromEntries(META_FLAGS.map((flag) => [flag, query.includeMeta.includes(flag)]));
      return startExport(c, deps, group, {
        count: () => countResponses(db, studyKey, { surveyKey, ...(filter === undefined ? {} : { filter }) }),
        create: () =>
          createResponseExportTask(
            db,
            studyKey,
            {
              surveyKey,
              format: query.format ?? "wide",
              questionOptionSep: query.questionOptionSep ?? DEFAULT_QUESTION_OPTION_SEP,
              shortKeys: query.shortKeys ?? false,
              extraContextColumns: query.extraContextColumns,
              includeMeta: includeMeta as unknown as IncludeMeta,
              ...(filter === undefined ? {} : { filter }),
              ...(sort === undefined ? {} : { sort }),
              gzip: query.gzip ?? false,
              ...(query.guardFormulas === undefined ? {} : { guardFormulas: query.guardFormulas }),
            },
            who.subject,
            deps,
          ),
      });
    },
  );
}
