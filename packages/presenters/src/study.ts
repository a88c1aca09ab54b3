import { z } from "@hono/zod-openapi";
import { caseDateValue } from "./case-date";
import {
  STUDY_STATUSES,
  STUDY_VARIABLE_TYPES,
  type AuditLogEntry,
  type CodeListSummary,
  type RulesVersion,
  type RulesVersionSummary,
  type StoredCode,
  type StoredStudyVariable,
  type StudyOverview,
} from "@studyflow/domain/study-config";

/** Study configuration as the interface shows it: timestamps as ISO 8601, absent settings as their defaults. */

const isoInstant = (description?: string) =>
  z.string().openapi({ format: "date-time", ...(description ? { description } : {}) });

const languageTexts = (example: Record<string, string>) =>
  z.record(z.string(), z.string()).openapi({ description: "language code → text", example });

export const studyPropsSchema = z
  .object({
    name: languageTexts({ en: "Flu watch", de: "Grippe-Radar" }),
    description: languageTexts({ en: "Weekly symptoms, one kit per household." }),
    tags: z.array(z.string()).openapi({ example: ["influenza", "cohort"] }),
    startDate: z.string().nullable().openapi({ description: "YYYY-MM-DD; null when not set", example: "2026-11-01" }),
  })
  .openapi("StudyProps");

export const studyConfigSchema = z
  .object({
    strictRules: z.boolean().openapi({ description: "a failing rule rejects the participant event (default off)" }),
    timeZone: z.string().openapi({ description: "IANA zone of the rules' calendar functions", example: "UTC" }),
    unknownSurveyVersion: z.enum(["reject", "record"]),
    temporaryParticipantMaxAgeSeconds: z.number().int().optional(),
  })
  .openapi("StudyConfig");

export const studySchema = z
  .object({
    key: z.string(),
    status: z.enum(STUDY_STATUSES).openapi({ description: "inactive: participant events answer 409" }),
    trackAccount: z.boolean(),
    props: studyPropsSchema,
    config: studyConfigSchema,
    currentRulesVersion: z.number().int().nullable().openapi({ description: "null while the study has no rules" }),
    createdAt: isoInstant(),
    updatedAt: isoInstant(),
  })
  .openapi("Study");

export function presentStudy({ study, currentRulesVersion }: StudyOverview): z.infer<typeof studySchema> {
  const { props, config } = study;
  return {
    key: study.key,
    status: study.status,
    trackAccount: study.trackAccount,
    props: {
      name: props.name ?? {},
      description: props.description ?? {},
      tags: props.tags ?? [],
      startDate: props.startDate ?? null,
    },
    config: {
      strictRules: config.strictRules ?? false,
      timeZone: config.timeZone ?? "UTC",
      unknownSurveyVersion: config.unknownSurveyVersion ?? "record",
      ...(config.temporaryParticipantMaxAgeSeconds === undefined
        ? {}
        : { temporaryParticipantMaxAgeSeconds: config.temporaryParticipantMaxAgeSeconds }),
    },
    currentRulesVersion,
    createdAt: study.createdAt.toISOString(),
    updatedAt: study.updatedAt.toISOString(),
  };
}

export const codeListSummarySchema = z
  .object({ listKey: z.string().openapi({ example: "kit-codes" }), codeCount: z.number().int() })
  .openapi("CodeListSummary");

export const studyCodeSchema = z
  .object({ code: z.string().openapi({ example: "KIT-0001" }), addedAt: isoInstant() })
  .openapi("StudyCode");

export function presentCodeListSummary(list: CodeListSummary): z.infer<typeof codeListSummarySchema> {
  return { listKey: list.listKey, codeCount: list.codeCount };
}

export function presentStudyCode(code: StoredCode): z.infer<typeof studyCodeSchema> {
  return { code: code.code, addedAt: code.addedAt.toISOString() };
}

export const studyVariableSchema = z
  .object({
    id: z.string().openapi({ description: "the variable's id: its key (unique in its study)", example: "kitStock" }),
    createdAt: isoInstant(),
    configUpdatedAt: isoInstant("when the description (label … configs) last changed"),
    valueUpdatedAt: isoInstant("when the value last changed, by a person or a rule"),
    studyKey: z.string().openapi({ example: "flu-watch" }),
    key: z.string().openapi({ example: "kitStock" }),
    type: z.enum(STUDY_VARIABLE_TYPES),
    value: z.union([z.string(), z.number(), z.boolean()]).openapi({
      description: "dates as RFC 3339 date-times (the rules read them as Unix seconds)",
      example: 250,
    }),
    label: z.string(),
    description: z.string(),
    uiType: z.string().openapi({ description: "how case-admin edits the value" }),
    uiPriority: z.number().int().openapi({ description: "the variable's place in case-admin's list" }),
    configs: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "case-admin's per-type settings (bounds, options), as given; absent when none" }),
  })
  .openapi("StudyVariable");

/** JavaScript's last instant in seconds: a date variable beyond it stays Unix seconds. */

/** A study variable as case-backend presents it (CASE's StudyVariables), dates as RFC 3339. */
export function presentStudyVariable(
  studyKey: string,
  variable: StoredStudyVariable,
): z.infer<typeof studyVariableSchema> {
  return {
    id: variable.key,
    createdAt: variable.createdAt.toISOString(),
    configUpdatedAt: variable.configUpdatedAt.toISOString(),
    valueUpdatedAt: variable.valueUpdatedAt.toISOString(),
    studyKey,
    key: variable.key,
    type: variable.type,
    value: variable.type === "date" ? caseDateValue(variable.value) : variable.value,
    label: variable.label,
    description: variable.description,
    uiType: variable.uiType,
    uiPriority: variable.uiPriority,
    ...(variable.configs === null ? {} : { configs: variable.configs }),
  };
}

export const rulesVersionSummarySchema = z
  .object({
    version: z.number().int(),
    uploadedBy: z.string(),
    uploadedAt: isoInstant(),
    ruleCount: z.number().int(),
  })
  .openapi("RulesVersionSummary");

export const rulesVersionSchema = z
  .object({
    version: z.number().int(),
    uploadedBy: z.string(),
    uploadedAt: isoInstant(),
    rules: z.array(z.unknown()).openapi({ description: "the rule expressions, in the CASE study-engine JSON form" }),
  })
  .openapi("RulesVersion");

export function presentRulesVersionSummary(summary: RulesVersionSummary): z.infer<typeof rulesVersionSummarySchema> {
  return {
    version: summary.version,
    uploadedBy: summary.uploadedBy,
    uploadedAt: summary.uploadedAt.toISOString(),
    ruleCount: summary.ruleCount,
  };
}

export function presentRulesVersion(version: RulesVersion): z.infer<typeof rulesVersionSchema> {
  return {
    version: version.version,
    uploadedBy: version.uploadedBy,
    uploadedAt: version.uploadedAt.toISOString(),
    rules: version.rules,
  };
}

export const auditEntrySchema = z
  .object({
    id: z.string().openapi({ description: "increasing with each recorded change" }),
    actor: z.string().openapi({ description: "the management subject who made the change" }),
    action: z.string().openapi({ example: "variable.set" }),
    target: z
      .string()
      .nullable()
      .openapi({ description: "what was changed: a code list, a variable, a rules version", example: "kitStock" }),
    details: z
      .record(z.string(), z.unknown())
      .openapi({ description: "what changed, e.g. the value before and after" }),
    at: isoInstant(),
  })
  .openapi("AuditEntry");

export function presentAuditEntry(entry: AuditLogEntry): z.infer<typeof auditEntrySchema> {
  return {
    id: String(entry.id),
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    details: entry.details,
    at: entry.at.toISOString(),
  };
}
