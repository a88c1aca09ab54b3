import { z } from "@hono/zod-openapi";
import { isTimeZoneName } from "@studyflow/engine";
import { assertStudyPermission } from "@studyflow/domain/access";
import {
  LANGUAGE_CODE,
  STUDY_PROPERTY_LIMITS,
  STUDY_STATUSES,
  isCalendarDate,
  updateStudy,
} from "@studyflow/domain/study-config";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { presentStudy, studySchema } from "@studyflow/presenters/study";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../schemas";

const { languages, nameLength, descriptionLength, tags, tagLength } = STUDY_PROPERTY_LIMITS;

const languageTexts = (maxLength: number, example: Record<string, string>) =>
  z
    .preprocess(
      (texts, ctx) => {
        // checked before the record is built: a key such as "__proto__" would not survive into it
        if (texts !== null && typeof texts === "object" && !Array.isArray(texts)) {
          const codes = Object.keys(texts);
          if (codes.length > languages) ctx.addIssue({ code: "custom", message: `at most ${languages} languages` });
          for (const code of codes.filter((key) => !LANGUAGE_CODE.test(key))) {
            ctx.addIssue({ code: "custom", path: [code], message: "is not a language code such as en or de-CH" });
          }
        }
        return texts;
      },
      z.record(
        z.string(),
        z
          .string()
          .refine((text) => text.trim() !== "", "must not be empty")
          .refine((text) => text.length <= maxLength, `must be at most ${maxLength} characters`),
      ),
    )
    .nullable()
    .optional()
    .openapi({ description: "language code → text; replaces every language, null removes", example });

const studyChangeSchema = z
  .strictObject({
    name: languageTexts(nameLength, { en: "Flu watch", de: "Grippe-Radar" }),
    description: languageTexts(descriptionLength, { en: "Weekly symptoms, one kit per household." }),
    tags: z
      .array(z.string().trim().min(1, "must not be empty").max(tagLength, `must be at most ${tagLength} characters`))
      .max(tags, `at most ${tags} tags`)
      .superRefine((given, ctx) => {
        given.forEach((tag, i) => {
          if (given.indexOf(tag) !== i) ctx.addIssue({ code: "custom", path: [i], message: `"${tag}" is given twice` });
        });
      })
      .nullable()
      .optional()
      .openapi({ description: "replaces every tag; null removes", example: ["influenza", "cohort"] }),
    startDate: z
      .string()
      .refine(isCalendarDate, "must be a date YYYY-MM-DD")
      .nullable()
      .optional()
      .openapi({ example: "2026-11-01" }),
    systemDefaultStudy: z.boolean().optional().openapi({
      description: "CASE's default study: participant apps (tekenradar) enter every profile of a new account into it",
    }),
    timeZone: z
      .string()
      .max(100, "must be at most 100 characters")
      .refine(isTimeZoneName, "unknown time zone: use an IANA name such as Europe/Amsterdam or UTC")
      .nullable()
      .optional()
      .openapi({ description: "IANA zone of the rules' calendar functions; null means UTC", example: "Europe/Berlin" }),
    strictRules: z.boolean().optional().openapi({ description: "a failing rule rejects the whole participant event" }),
    unknownSurveyVersion: z
      .enum(["reject", "record"])
      .optional()
      .openapi({
        description:
          "a response whose versionId names no uploaded version of its survey: `reject` answers 400; `record` " +
          "(default) stores it and records a rule failure (not for surveys the study holds no version of)",
      }),
    status: z.enum(STUDY_STATUSES).optional(),
    trackAccount: z
      .boolean()
      .optional()
      .openapi({ description: "participants store an HMAC of their account id (as PUT …/track-account sets it)" }),
  })
  .refine((change) => Object.keys(change).length > 0, "give at least one field to change")
  .openapi("StudyChange");

export function registerUpdateStudy(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "patch",
      path: "/{studyKey}",
      tags: ["studies"],
      summary: "Change a study's properties, rule settings or status",
      description:
        "Properties: `name` and `description` per language code, `tags`, `startDate` (YYYY-MM-DD), `systemDefaultStudy`. Rule settings: " +
        "`timeZone` (IANA name, for the calendar functions of the rules), `strictRules` and `unknownSurveyVersion`; `trackAccount`. An absent field stays as " +
        "it is, a given one replaces the whole value (a name map replaces every language), null removes it.\n\n" +
        "`status: inactive` closes the study to participants: every participant event answers 409 and changes " +
        "nothing (entering, leaving, submitting a response, from the participant app or through " +
        "`POST /v1/studies/{studyKey}/participants/{participantID}/responses`, merging a temporary participant and " +
        "registering one). Events already running finish first: the change waits for them. Management goes on: " +
        "this configuration, rules uploads, reading participants' data and rule failures, and bulk run-actions " +
        "tasks, which still apply rules to every participant.\n\n" +
        "Each kind of change is recorded in the audit log (`study.props.update`, `study.config.update`, " +
        "`study.status.update`, `study.track-account.update`) with the values before and after. Requires `update-study-props`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam, body: jsonBody(studyChangeSchema) },
      responses: {
        200: jsonContent(z.object({ study: studySchema }), "the study after the change"),
        ...errorResponses([400, 401, 403, 404], {
          400: "an invalid or unknown field (the message names it), or no field at all",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "update-study-props");
      const study = await updateStudy(db, studyKey, c.req.valid("json"), who.subject, deps);
      return c.json({ study: presentStudy(study) }, 200);
    },
  );
}
