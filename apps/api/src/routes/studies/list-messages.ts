import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { listStudyMessages, type StudyMessage } from "@studyflow/domain/outbox";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";
import { nextCursorField, pageQuery } from "./page-query";

const MESSAGE_STATUSES = ["pending", "sending", "sent", "failed", "expired"] as const;

const studyMessageSchema = z
  .object({
    id: z.string(),
    template: z.string().openapi({ description: "the participant message type, or `researcher-notification`" }),
    status: z.enum(MESSAGE_STATUSES),
    attempts: z.number().int(),
    lastError: z.string().nullable().openapi({ description: "why the last attempt failed (e.g. no template)" }),
    createdAt: z.string(),
    sentAt: z.string().nullable(),
    expiresAt: z.string().nullable(),
  })
  .openapi("StudyMessage");

function presentStudyMessage(message: StudyMessage): z.infer<typeof studyMessageSchema> {
  return {
    id: message.id,
    template: message.template,
    status: message.status,
    attempts: message.attempts,
    lastError: message.lastError,
    createdAt: message.createdAt.toISOString(),
    sentAt: message.sentAt?.toISOString() ?? null,
    expiresAt: message.expiresAt?.toISOString() ?? null,
  };
}

export function registerListMessages(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/messages",
      tags: ["studies"],
      summary: "The e-mails a study caused and where their delivery stands; newest first",
      description:
        "Participant messages (due `ADD_MESSAGE` messages, `SEND_MESSAGE_NOW`) and researcher notifications, with " +
        "their status, attempts and the reason of the last failure: `status=failed` lists what did not go out (no " +
        "template for the message type, no recipient, refused by the mail server). Never the address or the " +
        "payload. Pages with `limit` and `cursor`. Requires `read-rule-failures`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: pageQuery.extend({ status: z.enum(MESSAGE_STATUSES).optional() }),
      },
      responses: {
        200: jsonContent(
          z.object({ messages: z.array(studyMessageSchema), nextCursor: nextCursorField }),
          "a page of the study's e-mails",
        ),
        ...errorResponses([400, 401, 403, 404], { 400: "bad status, limit or cursor", 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { limit, cursor, status } = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "read-rule-failures");
      const page = await listStudyMessages(db, studyKey, {
        limit,
        ...(cursor === undefined ? {} : { cursor }),
        ...(status === undefined ? {} : { status }),
      });
      return c.json({ messages: page.items.map(presentStudyMessage), nextCursor: page.nextCursor }, 200);
    },
  );
}
