import { z } from "@hono/zod-openapi";
import { STUDY_VARIABLE_TYPES } from "@studyflow/domain/study-config";
import { keyString } from "../../schemas";

/** case-admin's description of a variable (CASE's StudyVariables minus key, type and value). */
const descriptionFields = {
  label: z.string().optional(),
  description: z.string().optional(),
  uiType: z.string().optional().openapi({ description: "how case-admin edits the value" }),
  uiPriority: z
    .number()
    .int("uiPriority must be a whole number")
    .min(-2_147_483_648)
    .max(2_147_483_647)
    .optional()
    .openapi({ description: "the variable's place in case-admin's list" }),
  configs: z
    .record(z.string(), z.unknown())
    .nullable()
    .optional()
    .openapi({ description: "case-admin's per-type settings (bounds, options), kept as given" }),
};

/** A value as case-admin sends it: a string, number or boolean (a date as RFC 3339 or Unix time). */
const variableValue = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: "value must be a string, number or boolean",
});

export const createVariableBody = z
  .object({
    variableDef: z.object({
      key: keyString("key").openapi({ example: "kitStock" }),
      type: z.enum(STUDY_VARIABLE_TYPES),
      value: variableValue.optional().openapi({ description: 'absent: the type\'s zero ("", 0, false, 1970-01-01)' }),
      ...descriptionFields,
    }),
  })
  .openapi("StudyVariableCreate");

export const describeVariableBody = z
  .object({
    variableDef: z
      .object(descriptionFields)
      .openapi({ description: "the whole description: absent fields become empty; key, type and value are ignored" }),
  })
  .openapi("StudyVariableDescribe");

export const variableValueBody = z
  .object({
    variable: z.object({
      value: variableValue,
      type: z
        .enum(STUDY_VARIABLE_TYPES)
        .optional()
        .openapi({ description: "if given, must be the variable's type (the value route never changes it)" }),
    }),
  })
  .openapi("StudyVariableValue");
