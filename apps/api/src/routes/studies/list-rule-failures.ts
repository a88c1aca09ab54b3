import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import { listRuleFailures } from "@studyflow/domain/events";
import { getStudy } from "@studyflow/domain/studies";
import { managementOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { presentRuleFailure, ruleFailureSchema } from "@studyflow/presenters/rule-failure";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../schemas";

const DEFAULT_PAGE = 100;
const MAX_PAGE = 500;

/** The page cursor: the last failure of the page, opaque to clients. */
function encodeCursor(failure: { occurredAt: Date; id: string }): string {
  return Buffer.from(`${failure.occurredAt.toISOString()}|${failure.id}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): { occurredAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const occurredAt = new Date(at ?? "");
  if (Number.isNaN(occurredAt.getTime()) || !id || !/^[0-9a-f-]{36}$/i.test(id)) {
    throw new Invalid("cursor is not one this API gave out");
  }
  return { occurredAt, id };
}

const isoInstant = (name: string) =>
  z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), `${name} must be an ISO 8601 date-time`)
    .optional()
    .openapi({ example: "2026-11-01T00:00:00Z" });

export function registerListRuleFailures(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "get",
      path: "/{studyKey}/rule-failures",
      tags: ["studies"],
      summary: "Rule failures of a study's participant events and bulk tasks, most recent first",
      description:
        "Every rule that failed for a participant: the event, the rules version, the rule's index, the JSON path of " +
        "the failing expression and the message. Requires `read-rule-failures`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: studyKeyParam,
        query: z.object({
          participantId: z.string().min(1).max(200).optional(),
          eventType: z.enum(["ENTER", "SUBMIT", "LEAVE", "MERGE", "CUSTOM", "TIMER"]).optional(),
          taskId: z.uuid({ error: "taskId must be a task id" }).optional(),
          since: isoInstant("since"),
          limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
          cursor: z.string().max(200).optional().openapi({ description: "nextCursor of the previous page" }),
        }),
      },
      responses: {
        200: jsonContent(
          z.object({
            ruleFailures: z.array(ruleFailureSchema),
            nextCursor: z.string().nullable().openapi({ description: "null on the last page" }),
          }),
          "a page of rule failures",
        ),
        ...errorResponses([400, 401, 403, 404], { 404: "study not found" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const query = c.req.valid("query");
      await assertStudyPermission(db, managementOf(c), studyKey, "read-rule-failures");
      await getStudy(db, studyKey);
      const rows = await listRuleFailures(db, {
        studyKey,
        ...(query.participantId === undefined ? {} : { participantId: query.participantId }),
        ...(query.eventType === undefined ? {} : { eventType: query.eventType }),
        ...(query.taskId === undefined ? {} : { taskId: query.taskId }),
        ...(query.since === undefined ? {} : { since: new Date(query.since) }),
        ...(query.cursor === undefined ? {} : { before: decodeCursor(query.cursor) }),
        limit: query.limit,
      });
      const last = rows.at(-1);
      return c.json(
        {
          ruleFailures: rows.map(presentRuleFailure),
          nextCursor: rows.length === query.limit && last ? encodeCursor(last) : null,
        },
        200,
      );
    },
  );
}
