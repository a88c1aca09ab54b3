import { z } from "@hono/zod-openapi";
import type { RulesVersion, RulesVersionSummary } from "@studyflow/domain/study-config";

const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** A rules version as case-backend lists it (`rules: null`), with studyflow's number and rule count beside it. */
export const caseRulesVersionListedSchema = z
  .object({
    id: z.string().openapi({ description: "the version number as a string", example: "3" }),
    studyKey: z.string(),
    uploadedAt: z.number().int().openapi({ description: "Unix seconds" }),
    uploadedBy: z.string().openapi({ description: "the management subject that uploaded it" }),
    rules: z.null().openapi({ description: "left out of the list, as case-backend does: fetch one version" }),
    version: z.number().int(),
    ruleCount: z.number().int(),
  })
  .openapi("CaseStudyRulesListed");

export function presentCaseRulesListed(
  studyKey: string,
  summary: RulesVersionSummary,
): z.infer<typeof caseRulesVersionListedSchema> {
  return {
    id: String(summary.version),
    studyKey,
    uploadedAt: unixSeconds(summary.uploadedAt),
    uploadedBy: summary.uploadedBy,
    rules: null,
    version: summary.version,
    ruleCount: summary.ruleCount,
  };
}

/** One rules version as case-backend answers it: `StudyRules`. */
export const caseStudyRulesSchema = z
  .object({
    id: z.string().openapi({ example: "3" }),
    studyKey: z.string(),
    uploadedAt: z.number().int().openapi({ description: "Unix seconds" }),
    uploadedBy: z.string(),
    rules: z.array(z.unknown()).openapi({ description: "the rule expressions, in the CASE study-engine JSON form" }),
    version: z.number().int(),
  })
  .openapi("CaseStudyRules");

export function presentCaseStudyRules(studyKey: string, version: RulesVersion): z.infer<typeof caseStudyRulesSchema> {
  return {
    id: String(version.version),
    studyKey,
    uploadedAt: unixSeconds(version.uploadedAt),
    uploadedBy: version.uploadedBy,
    rules: version.rules,
    version: version.version,
  };
}
