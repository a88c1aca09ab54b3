import { z } from "@hono/zod-openapi";

/** Request and response pieces several resources share; response shapes of domain objects live with their presenters. */

export const messageSchema = z.object({ message: z.string() }).openapi("Message");

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  ...(description ? { description } : {}),
  content: { "application/json": { schema } },
});

export const MANAGEMENT_SECURITY = [{ managementBearer: [] }];
export const PARTICIPANT_SECURITY = [{ participantBearer: [] }];

/** Keys of studies, surveys and the like: printable, bounded. */
export const keyString = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(200, `${name} is longer than 200 characters`)
    .regex(/^[^\s/?#]+$/, `${name} must not contain spaces, '/', '?' or '#'`);

export const studyKeyParam = z.object({
  studyKey: keyString("studyKey").openapi({ param: { name: "studyKey", in: "path" }, example: "covid-cohort" }),
});

export const profileIdField = z
  .string()
  .min(1, "profileID must not be empty")
  .max(200, "profileID is longer than 200 characters");
