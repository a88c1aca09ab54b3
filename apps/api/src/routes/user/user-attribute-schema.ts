import { z } from "@hono/zod-openapi";
import type { UserAttributeDocument } from "@studyflow/domain/participant-accounts";

export const caseUserAttributesSchema = z
  .object({
    id: z
      .string()
      .openapi({ description: "24 hex digits, as case-backend's ObjectIds", example: "6650a1f2c3d4e5f6a7b8c9d0" }),
    userId: z.string(),
    type: z.string().openapi({ example: "onboarding" }),
    attributes: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.string().openapi({ description: "when it was last written, RFC 3339 as Go writes a time" }),
  })
  .openapi("CaseUserAttributes");

/** An instant as Go's encoder writes a time.Time: RFC 3339 in UTC, fractional seconds only where there are any. */
const goTime = (at: Date) =>
  at
    .toISOString()
    .replace(/(\.\d*?)0+Z$/, "$1Z")
    .replace(/\.Z$/, "Z");

export function presentCaseUserAttributes(document: UserAttributeDocument): z.infer<typeof caseUserAttributesSchema> {
  return {
    id: document.id,
    userId: document.userId,
    type: document.type,
    attributes: document.attributes,
    createdAt: goTime(document.createdAt),
  };
}
