import { z } from "@hono/zod-openapi";
import { assertPermission, type ManagementSubject } from "@studyflow/domain/access";
import type { Executor, MessagingResourceKey } from "@studyflow/db";
import { keyString } from "../schemas";

/**
 * case-backend's messaging permission: resource type `messaging`, the group's key, action `*`
 * (admins always pass). Study templates are limited by `{studyKey}`: a grant limited to other
 * studies does not open them.
 */
export async function assertMessaging(
  db: Executor,
  who: ManagementSubject,
  key: MessagingResourceKey,
  studyKey?: string,
): Promise<void> {
  await assertPermission(db, who, {
    resourceType: "messaging",
    resourceKeys: [key],
    action: "*",
    ...(studyKey === undefined ? {} : { limiter: { studyKey } }),
  });
}

export const messageTypeParam = z.object({
  messageType: keyString("messageType").openapi({ param: { name: "messageType", in: "path" }, example: "weekly" }),
});

export const studyMessageTypeParams = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" }, example: "covid-cohort" }),
  messageType: keyString("messageType").openapi({ param: { name: "messageType", in: "path" }, example: "reminder" }),
});

export const scheduleIdParam = z.object({
  id: z
    .string()
    .min(1, "id must not be empty")
    .max(200, "id is longer than 200 characters")
    .openapi({ param: { name: "id", in: "path" }, example: "7d3c2a9e-5b1f-4c1e-9a51-0f5e8a3b2c10" }),
});

const text = (name: string, max = 1000) => z.string().max(max, `${name} is longer than ${max} characters`);

const headerOverrides = z
  .object({
    from: text("headerOverrides.from").optional(),
    sender: text("headerOverrides.sender").optional(),
    replyTo: z.array(text("headerOverrides.replyTo")).max(50).nullable().optional(),
    noReplyTo: z.boolean().optional(),
  })
  .openapi("CaseEmailHeaderOverrides");

const emailTranslation = z.object({
  lang: text("lang", 50),
  subject: text("subject").optional(),
  templateDef: z.string().openapi({ description: "base64 of a Go html/template" }),
});

/** An e-mail template as case-admin sends it: no `id` (or "") for a new one. */
export const emailTemplateBody = z
  .object({
    id: text("id", 200).optional(),
    messageType: text("messageType", 200),
    studyKey: text("studyKey", 200).optional(),
    defaultLanguage: text("defaultLanguage", 50).optional(),
    headerOverrides: headerOverrides.nullable().optional(),
    translations: z.array(emailTranslation).nullable().optional(),
  })
  .openapi("CaseEmailTemplateInput");

export const emailTemplateSchema = z
  .object({
    id: z.string().openapi({ description: '"" for a type that has no template yet' }),
    messageType: z.string(),
    studyKey: z.string().openapi({ description: '"" for a global template' }),
    defaultLanguage: z.string(),
    headerOverrides: headerOverrides.nullable(),
    translations: z.array(z.object({ lang: z.string(), subject: z.string(), templateDef: z.string() })),
  })
  .openapi("CaseEmailTemplate");

export const emailTemplatesAnswer = z.object({ templates: z.array(emailTemplateSchema) });

export const smsTemplateBody = z
  .object({
    id: text("id", 200).optional(),
    messageType: text("messageType", 200),
    defaultLanguage: text("defaultLanguage", 50).optional(),
    from: text("from").optional(),
    translations: z
      .array(z.object({ lang: text("lang", 50), templateDef: z.string() }))
      .nullable()
      .optional(),
  })
  .openapi("CaseSmsTemplateInput");

export const smsTemplateSchema = z
  .object({
    id: z.string(),
    messageType: z.string(),
    defaultLanguage: z.string(),
    from: z.string(),
    translations: z.array(z.object({ lang: z.string(), templateDef: z.string() })),
  })
  .openapi("CaseSmsTemplate");

const unixSeconds = (name: string) =>
  z
    .number()
    .int(`${name} must be whole seconds`)
    .min(0, `${name} must not be negative`)
    .max(253402300799, `${name} is after the year 9999`);

export const scheduledEmailBody = z
  .object({
    id: text("id", 200).optional(),
    template: emailTemplateBody,
    type: z.enum(["all-users", "study-participants"]),
    studyKey: text("studyKey", 200).optional(),
    condition: z.record(z.string(), z.unknown()).nullable().optional(),
    nextTime: unixSeconds("nextTime"),
    period: unixSeconds("period"),
    label: text("label").optional(),
    until: unixSeconds("until").nullable().optional(),
  })
  .openapi("CaseScheduledEmailInput");

export const scheduledEmailSchema = z
  .object({
    id: z.string(),
    template: emailTemplateSchema,
    type: z.enum(["all-users", "study-participants"]),
    studyKey: z.string(),
    condition: z.record(z.string(), z.unknown()).nullable(),
    nextTime: z.number().int().openapi({ description: "Unix seconds" }),
    period: z.number().int().openapi({ description: "seconds" }),
    label: z.string(),
    until: z.number().int().openapi({ description: "Unix seconds; 0: no end" }),
  })
  .openapi("CaseScheduledEmail");
