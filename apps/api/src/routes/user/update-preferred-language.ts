import { z } from "@hono/zod-openapi";
import { INVALID_LANGUAGE_CODE_MESSAGE, setPreferredLanguage } from "@studyflow/domain/participant-accounts";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

const preferredLanguageRequest = z.object({
  // The pattern is the domain's (CASE_LANGUAGE_CODE); an absent key is checked there too, as CASE reads it as "".
  newLocale: z.string().max(20, INVALID_LANGUAGE_CODE_MESSAGE).optional(),
});

export function registerUpdatePreferredLanguage(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "put",
      path: "/preferred-language",
      tags: ["user"],
      summary: "Change the account's language (CASE)",
      description:
        "case-backend's updatePreferredLanguage: the language the account's mails are written in. `newLocale` is a " +
        "language code as case-backend accepts it: two lower-case letters, optionally `-` and a region of two " +
        "capitals or three digits (`en`, `nl-BE`, `es-419`); anything else is 400 `invalid language code`.",
      security: PARTICIPANT_SECURITY,
      caseBody: preferredLanguageRequest,
      bodyDescription: "`newLocale`, the new language code",
      responses: {
        200: jsonContent(messageSchema, "the language is stored"),
        ...errorResponses([400, 401], { 400: "no body, or newLocale is not a language code" }),
      },
    },
    async (c) => {
      await setPreferredLanguage(db, participantOf(c).userId, c.req.valid("json").newLocale ?? "");
      return c.json({ message: "preferred language updated" }, 200);
    },
  );
}
