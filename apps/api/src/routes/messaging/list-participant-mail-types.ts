import { z } from "@hono/zod-openapi";
import { participantMailCoverage } from "@studyflow/domain/outbox";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent, MANAGEMENT_SECURITY } from "../schemas";
import { assertMessaging } from "./schemas";

const participantMailType = z
  .object({
    messageType: z.string().openapi({ example: "verification-code" }),
    sentWhen: z.string().nullable().openapi({ description: "when studyflow sends it; null: never" }),
    keys: z.array(z.string()).openapi({ description: "the values a template is rendered with, besides `language`" }),
    studyflowOnly: z
      .boolean()
      .optional()
      .openapi({ description: "true for studyflow's own types (case-backend sends no such mail)" }),
    template: z
      .object({ defaultLanguage: z.string(), languages: z.array(z.string()) })
      .nullable()
      .openapi({ description: "the instance's global template of the type; null: studyflow's built-in mail goes" }),
  })
  .openapi("ParticipantMailType");

/**
 * studyflow's own: every participant mail type (CASE's message types, and studyflow's own) with
 * whether the instance has a global e-mail template of it and in which languages, so an operator
 * sees which mails still go out as studyflow's built-in ones.
 */
export function registerListParticipantMailTypes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/participant-mail-types",
      tags: ["messaging"],
      summary: "List the participant mail types and their global templates",
      description:
        "studyflow's own. Every mail studyflow sends to a participant is rendered from the instance's global " +
        "e-mail template of its type (`template`), in the participant's preferred language, else the template's " +
        "default; a type without one goes out as studyflow's built-in mail (English or German, a neutral subject). " +
        "Requires permission `messaging/global-email-templates/*` (admins always pass).",
      security: MANAGEMENT_SECURITY,
      bothSlashes: true,
      responses: {
        200: jsonContent(z.object({ types: z.array(participantMailType) }), "the types, CASE's first"),
        ...errorResponses([401, 403]),
      },
    },
    async (c) => {
      await assertMessaging(db, managementOf(c), "global-email-templates");
      const types = (await participantMailCoverage(db)).map((type) => ({ ...type, keys: [...type.keys] }));
      return c.json({ types }, 200);
    },
  );
}
