import { z } from "@hono/zod-openapi";
import { caseDateValue } from "@studyflow/presenters/case-date";
import type { StudyRow } from "@studyflow/domain/studies";
import type { StoredStudyVariable } from "@studyflow/domain/study-config";
import { caseStudyPropsFields, presentCaseStudy } from "@studyflow/presenters/case-study";

/**
 * A study as case-backend's public study routes show it (its StudyInfo): key, status, props and
 * stats, nothing of its configuration, rules or secret.
 */
export const caseStudyInfoSchema = z
  .object({
    key: z.string(),
    status: z.string(),
    props: z.object({
      ...caseStudyPropsFields,
      systemDefaultStudy: z
        .boolean()
        .openapi({ description: "participant apps enter every new profile into such studies" }),
    }),
    stats: z
      .object({
        participantCount: z.number().int(),
        tempParticipantCount: z.number().int(),
        responseCount: z.number().int(),
      })
      .openapi({ description: "deprecated in CASE; always zeros" }),
    profileIds: z.array(z.string()).nullable().openapi({
      description: "participating studies: the user's profiles that are active participants; null elsewhere",
    }),
  })
  .openapi("CaseStudyInfo");

export type CaseStudyInfo = z.infer<typeof caseStudyInfoSchema>;

export function presentCaseStudyInfo(study: StudyRow, profileIds: string[] | null = null): CaseStudyInfo {
  const { key, status, props, stats } = presentCaseStudy(study, []);
  return { key, status, props, stats, profileIds };
}

/** A study variable as case-backend's public variable routes show it: its value and when it changed, no editor metadata. */
export const caseStudyVariableSchema = z
  .object({
    studyKey: z.string(),
    key: z.string(),
    type: z.string().openapi({ example: "int" }),
    value: z
      .union([z.string(), z.number(), z.boolean()])
      .openapi({ description: "dates as RFC 3339 text, as case-backend writes Go times" }),
    valueUpdatedAt: z.string().openapi({ description: "RFC 3339" }),
  })
  .openapi("CaseStudyVariable");

export function presentCaseStudyVariable(
  studyKey: string,
  variable: StoredStudyVariable,
): z.infer<typeof caseStudyVariableSchema> {
  const value = variable.type === "date" ? caseDateValue(variable.value) : variable.value;
  return {
    studyKey,
    key: variable.key,
    type: variable.type,
    value,
    valueUpdatedAt: variable.valueUpdatedAt.toISOString(),
  };
}
