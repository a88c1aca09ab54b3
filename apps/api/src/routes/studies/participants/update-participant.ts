import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { Invalid } from "@studyflow/domain/errors";
import { editParticipantState } from "@studyflow/domain/participants";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { participantSchema, presentParticipant } from "@studyflow/presenters/participant";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, keyString } from "../../schemas";
import { participantParams } from "./participant-params";

/** Bounds of an edited state: the sizes a participant's state reaches through rules, with room to spare. */
const MAX_ENTRIES = 1_000;
const MAX_TEXT = 4_096;

const unixSeconds = (name: string) =>
  z
    .number()
    .int(`${name} must be whole Unix seconds`)
    .min(0, `${name} must not be negative`)
    .max(Number.MAX_SAFE_INTEGER);
const text = (name: string, max = MAX_TEXT) => z.string().max(max, `${name} must be at most ${max} characters`);
const textMap = (name: string) =>
  z
    .record(text(`${name} key`, 200), text(`${name} value`))
    .refine((map) => Object.keys(map).length <= MAX_ENTRIES, `${name}: at most ${MAX_ENTRIES} entries`);

/** case-backend's Participant as case-admin's editor sends it back (the data explorer's participant, edited). */
const editedStateSchema = z.object({
  participantId: z.string().min(1, "participantId is required").max(200),
  currentStudySession: text("currentStudySession", 200).optional(),
  modifiedAt: unixSeconds("modifiedAt").optional().openapi({
    description:
      "the modifiedAt the editor read: a participant changed after it is not overwritten (409); 0 or absent: no check",
  }),
  enteredAt: unixSeconds("enteredAt"),
  studyStatus: z.string().min(1, "studyStatus must not be empty").max(100),
  flags: textMap("flags").nullish(),
  linkingCodes: textMap("linkingCodes").nullish(),
  assignedSurveys: z
    .array(
      z.object({
        surveyKey: keyString("surveyKey"),
        validFrom: unixSeconds("validFrom").optional(),
        validUntil: unixSeconds("validUntil").optional(),
        category: text("category", 100).optional(),
        studyKey: text("studyKey", 200).optional(),
        profileID: text("profileID", 200).optional(),
      }),
    )
    .max(MAX_ENTRIES)
    .nullish(),
  lastSubmissions: z
    .record(text("lastSubmissions key", 200), unixSeconds("lastSubmissions value"))
    .refine((map) => Object.keys(map).length <= MAX_ENTRIES, `lastSubmissions: at most ${MAX_ENTRIES} entries`)
    .nullish(),
  messages: z
    .array(z.object({ id: text("id", 200), type: text("type", 200), scheduledFor: unixSeconds("scheduledFor") }))
    .max(MAX_ENTRIES)
    .nullish(),
  hashedAccountID: z.string().max(200).optional().openapi({ description: "as read; it cannot be changed" }),
  isMainProfile: z.boolean().optional().openapi({ description: "as read; it cannot be changed" }),
});

export function registerUpdateParticipant(router: ApiRouter, deps: AppDeps) {
  defineRoute(
    router,
    {
      method: "put",
      path: "/{participantID}",
      tags: ["participants"],
      summary: "Replace a participant's state (CASE participant editor)",
      description:
        "The whole state as case-admin's editor sends it: status, session, entry time, flags, linking codes, " +
        "assigned surveys, last submissions and messages (absent maps and lists become empty, as case-backend " +
        "stores them). Refused with 409 when the stored participant was changed after the `modifiedAt` sent " +
        "(case-backend answers 500); `participantId` must be the path's, and `hashedAccountID`/`isMainProfile` " +
        "cannot be changed (400). The participant's message schedule follows its messages. Audited " +
        "(`participant.update`). Requires `edit-participant-data`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: participantParams,
      },
      caseBody: editedStateSchema,
      responses: {
        200: jsonContent(
          z.object({ message: z.string(), participant: participantSchema }),
          "saved; the participant as stored",
        ),
        ...errorResponses([400, 401, 403, 404, 409], {
          400: "invalid body, another participantId than the path's, or a changed account link",
          404: "study or participant not found",
          409: "the participant was changed after the state sent was read",
        }),
      },
    },
    async (c) => {
      const { studyKey, participantID } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(deps.database.db, who, studyKey, "edit-participant-data");
      const body = c.req.valid("json");
      if (body.participantId !== participantID) {
        throw new Invalid(`participantId: "${body.participantId}" is not the participant of the path`);
      }
      const now = Math.floor(deps.clock() / 1000);
      const saved = await editParticipantState(
        deps.database.db,
        {
          studyKey,
          participantId: participantID,
          actor: who.subject,
          state: {
            modifiedAt: body.modifiedAt ?? 0,
            currentStudySession: body.currentStudySession ?? "",
            enteredAt: body.enteredAt,
            studyStatus: body.studyStatus,
            flags: body.flags ?? {},
            linkingCodes: body.linkingCodes ?? {},
            assignedSurveys: (body.assignedSurveys ?? []).map((survey) => ({
              surveyKey: survey.surveyKey,
              validFrom: survey.validFrom ?? 0,
              validUntil: survey.validUntil ?? 0,
              category: survey.category ?? "",
              ...(survey.studyKey ? { studyKey: survey.studyKey } : {}),
              ...(survey.profileID ? { profileID: survey.profileID } : {}),
            })),
            lastSubmissions: body.lastSubmissions ?? {},
            messages: body.messages ?? [],
            hashedAccountId: body.hashedAccountID,
            isMainProfile: body.isMainProfile,
          },
        },
        now,
      );
      return c.json({ message: "participant updated", participant: presentParticipant(saved) }, 200);
    },
  );
}
