import { z } from "@hono/zod-openapi";
import type { MessageTemplate } from "@studyflow/domain/messages";

/** A message template as the interface shows it: the text as stored, the change as who and when. */
export const messageTemplateSchema = z
  .object({
    messageType: z.string().openapi({ example: "weekly-reminder" }),
    language: z.string().openapi({ description: "canonical language tag", example: "de-CH" }),
    subject: z.string().openapi({ example: "{{studyName}}: Ihre Woche" }),
    body: z.string().openapi({ example: "Guten Tag,\n\nbitte füllen Sie den Wochenfragebogen aus." }),
    updatedBy: z.string(),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("MessageTemplate");

export function presentMessageTemplate(template: MessageTemplate): z.infer<typeof messageTemplateSchema> {
  return {
    messageType: template.messageType,
    language: template.language,
    subject: template.subject,
    body: template.body,
    updatedBy: template.updatedBy,
    updatedAt: template.updatedAt.toISOString(),
  };
}
