import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { Invalid } from "@studyflow/domain/errors";
import { sendEmailOtp } from "@studyflow/domain/participant-sign-in";
import { participantOf, type AppEnv } from "../../app-env";
import type { AppDeps } from "../../deps";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

/** `auth`: the participant auth the OTP routes share (see index.ts). */
export function registerRequestOtp(router: ApiRouter, deps: AppDeps, auth: MiddlewareHandler<AppEnv>) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "get",
      path: "/otp",
      tags: ["participant auth"],
      summary: "E-mail a one-time code",
      description:
        "case-backend's requestOTP for type=email: a 6-digit code, valid 10 minutes, mailed through the outbox " +
        "and stored hashed; older codes keep working until they expire. A request within 30 s of the last code, " +
        "while that code is open, answers the same 200 and mails nothing (the participant app asks twice per " +
        "visit of its code page). At most 10 codes per account in 15 minutes; past that, and while the account's " +
        'wrong codes are used up, 429 with Retry-After and an error saying when to try again ("too many codes ' +
        'requested: try again in 7 minutes"), which the app shows on its code page. type=sms answers 400: ' +
        "studyflow has no SMS gateway.",
      security: PARTICIPANT_SECURITY,
      middleware: [auth],
      request: { query: z.object({ type: z.string().max(20).default("email") }) },
      responses: {
        200: jsonContent(messageSchema, "code sent"),
        ...errorResponses([400, 401, 429], {
          400: "type other than email",
          429: "too many codes requested, or too many wrong codes",
        }),
      },
    },
    async (c) => {
      const { type } = c.req.valid("query");
      if (type !== "email") throw new Invalid("type: only email codes are sent (studyflow has no SMS gateway)");
      const { userId, sessionId } = participantOf(c);
      // a repeat within seconds is answered as sent: the app cannot tell, and the first mail is on its way
      await sendEmailOtp(db, { userId, sessionId, now: new Date(clock()) });
      return c.json({ message: "OTP sent" }, 200);
    },
  );
}
