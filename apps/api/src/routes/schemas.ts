import { z } from "@hono/zod-openapi";

export const errorSchema = z.object({ error: z.string() }).openapi("Error");
export const messageSchema = z.object({ message: z.string() }).openapi("Message");

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const errorResponse = (description: string) => jsonContent(errorSchema, description);
