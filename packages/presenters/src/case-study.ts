import { z } from "@hono/zod-openapi";
import { type ResearcherSubscription } from "@studyflow/domain/notifications";
import { type StudyRow } from "@studyflow/domain/studies";
import {
  STUDY_STATUSES,
  type CaseStudyStats,
  type RulesVersion,
  type StudyOverview,
} from "@studyflow/domain/study-config";
import { type SurveyVersion } from "@studyflow/domain/surveys";
import { presentStudy, studyConfigSchema } from "./study";

/**
 * studyflow's study, rules and surveys in the JSON shapes CASE's management API uses (its Study,
 * StudyRules and Survey documents), for the CASE-shaped routes such as export-config.
 */

/** CASE's LocalisedObject: a language code and text parts (expression arguments). */
export interface CaseLocalisedText {
  code: string;
  parts: { dtype: "str"; str: string }[];
}

export interface CaseStudy {
  key: string;
  status: string;
  props: {
    name: CaseLocalisedText[];
    description: CaseLocalisedText[];
    tags: { label: CaseLocalisedText[] }[];
    startDate: number;
    endDate: number;
    systemDefaultStudy: boolean;
  };
  configs: { participantFileUploadRule: null; idMappingMethod: string; trackAccount: boolean };
  notificationSubscriptions: { messageType: string; email: string }[];
  stats: { participantCount: number; tempParticipantCount: number; responseCount: number };
  nextTimerEvent: number;
  rules: unknown[];
  /** studyflow's own settings (strict rules, time zone, …), which CASE's Study has no place for. */
  studyflowConfig: Record<string, unknown>;
}

/**
 * The language code given to study tags: studyflow's tags are plain strings, CASE's carry a text per
 * language; "en" is the language CASE's exporter falls back to.
 */
const TAG_LANGUAGE = "en";

/**
 * How studyflow derives participant ids in a study it created; not one of CASE's methods, so named
 * for what it is. A study imported from CASE keeps, and reports, CASE's method.
 */
export { STUDYFLOW_ID_MAPPING_METHOD } from "@studyflow/db";

/** Texts per language, by language code: the stored JSON keeps no order of its own. */
const localised = (texts: Record<string, string> | undefined): CaseLocalisedText[] =>
  Object.entries(texts ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([code, str]) => ({ code, parts: [{ dtype: "str", str }] }));

/** studyflow's plain tags as texts per language, each in TAG_LANGUAGE. */
const plainTags = (props: StudyRow["props"]): Record<string, string>[] =>
  (props.tags ?? []).map((tag) => ({ [TAG_LANGUAGE]: tag }));

/** YYYY-MM-DD → Unix seconds at 00:00 UTC, as CASE keeps dates; 0 (CASE's "not set") otherwise. */
function unixDay(date: string | undefined): number {
  if (!date) return 0;
  const at = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(at) ? 0 : Math.floor(at / 1000);
}

/** A study's props as CASE's Study holds them, with `tags` given as texts per language. */
function presentCaseStudyProps(props: StudyRow["props"], tags: readonly Record<string, string>[]): CaseStudy["props"] {
  return {
    name: localised(props.name),
    description: localised(props.description),
    tags: tags.map((texts) => ({ label: localised(texts) })),
    startDate: unixDay(props.startDate),
    endDate: 0,
    systemDefaultStudy: props.systemDefaultStudy === true,
  };
}

/**
 * The study as CASE's Study document, without its secret: CASE's export-config hands the study's
 * secret key out with the config; studyflow never lets the secret that derives participant ids
 * leave the server. Statistics and the timer field are zero, as CASE exports them.
 */
export function presentCaseStudy(study: StudyRow, subscriptions: readonly ResearcherSubscription[]): CaseStudy {
  return {
    key: study.key,
    status: study.status,
    props: presentCaseStudyProps(study.props, plainTags(study.props)),
    configs: {
      participantFileUploadRule: null,
      idMappingMethod: study.idMappingMethod,
      trackAccount: study.trackAccount,
    },
    notificationSubscriptions: subscriptions.map((s) => ({ messageType: s.messageType, email: s.email })),
    stats: { participantCount: 0, tempParticipantCount: 0, responseCount: 0 },
    nextTimerEvent: 0,
    rules: [],
    studyflowConfig: { ...study.config },
  };
}

export interface CaseStudyRules {
  studyKey: string;
  uploadedAt: number;
  uploadedBy: string;
  rules: unknown[];
  /** studyflow's version number of this rule set. */
  version: number;
}

/** The current rules as CASE's StudyRules; the uploader is left empty, as CASE's export-config does. */
export function presentCaseStudyRules(studyKey: string, rules: RulesVersion): CaseStudyRules {
  return {
    studyKey,
    uploadedAt: Math.floor(rules.uploadedAt.getTime() / 1000),
    uploadedBy: "",
    rules: rules.rules,
    version: rules.version,
  };
}

/**
 * A survey version as CASE's Survey: the definition as uploaded, with the server's fields
 * (versionId, published, unpublished in Unix seconds) put back.
 */
export function presentCaseSurvey(version: SurveyVersion): Record<string, unknown> {
  return {
    ...version.definition,
    versionId: version.versionId,
    published: Math.floor(version.publishedAt.getTime() / 1000),
    ...(version.unpublishedAt ? { unpublished: Math.floor(version.unpublishedAt.getTime() / 1000) } : {}),
  };
}

/** A LocalisedObject list in the OpenAPI document. */
const localisedSchema = z.array(
  z.object({ code: z.string(), parts: z.array(z.object({ dtype: z.string(), str: z.string() })) }),
);

/**
 * The props of CASE's Study every schema of it shows alike, all but `systemDefaultStudy` (whose
 * description differs between the management and the public study routes).
 */
export const caseStudyPropsFields = {
  name: localisedSchema,
  description: localisedSchema,
  tags: z.array(z.object({ label: localisedSchema })),
  startDate: z.number().int().openapi({ description: "Unix seconds; 0 when not set" }),
  endDate: z.number().int(),
};

/**
 * The Study case-admin reads (`GET /v1/studies`, `GET /v1/studies/{studyKey}`, `POST /v1/studies`):
 * CASE's document without its secret (not even CASE's empty `secretKey`), with studyflow's own fields beside it.
 */
export const caseAdminStudySchema = z
  .object({
    key: z.string(),
    status: z.enum(STUDY_STATUSES),
    props: z.object({ ...caseStudyPropsFields, systemDefaultStudy: z.boolean() }),
    configs: z.object({
      participantFileUploadRule: z.unknown().openapi({ description: "an expression; null: uploads are refused" }),
      idMappingMethod: z.string(),
      trackAccount: z.boolean(),
    }),
    stats: z.object({
      participantCount: z.number().int().openapi({ description: "active participants" }),
      tempParticipantCount: z.number().int(),
      responseCount: z.number().int().openapi({ description: "counted again when older than five minutes" }),
    }),
    rules: z.null(),
    notificationSubscriptions: z.null(),
    trackAccount: z.boolean().openapi({ description: "studyflow: as configs.trackAccount" }),
    config: studyConfigSchema.openapi({ description: "studyflow's rule settings" }),
    currentRulesVersion: z.number().int().nullable(),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("CaseStudy");

export type CaseAdminStudy = z.infer<typeof caseAdminStudySchema>;

/** The study as case-admin reads it; tags with their texts per language when case-admin set them. */
export function presentCaseAdminStudy(overview: StudyOverview, stats: CaseStudyStats): CaseAdminStudy {
  const { study } = overview;
  const plain = presentStudy(overview);
  return {
    key: study.key,
    status: study.status,
    props: presentCaseStudyProps(study.props, study.props.localisedTags ?? plainTags(study.props)),
    configs: {
      participantFileUploadRule: study.config.participantFileUploadRule ?? null,
      idMappingMethod: study.idMappingMethod,
      trackAccount: study.trackAccount,
    },
    stats,
    rules: null,
    notificationSubscriptions: null,
    trackAccount: study.trackAccount,
    config: plain.config,
    currentRulesVersion: overview.currentRulesVersion,
    createdAt: plain.createdAt,
    updatedAt: plain.updatedAt,
  };
}
