import { z } from "@hono/zod-openapi";
import { participantAccountSchema } from "@studyflow/presenters/participant-account";
import { jsonContent } from "../schemas";

/** `{id}` of the account routes: a participant account's id. */
export const userIdParam = z.object({
  id: z
    .string()
    .max(100, "id is longer than 100 characters")
    .openapi({ param: { name: "id", in: "path" }, example: "4f1c2a0e-6d0b-4a57-9d0e-2b7a9b1f3c11" }),
});

/** What lock and unlock answer. */
export const accountAnswer = jsonContent(z.object({ account: participantAccountSchema }), "the account as it is now");
