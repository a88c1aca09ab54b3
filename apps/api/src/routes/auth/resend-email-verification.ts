import { z } from "@hono/zod-openapi";
import { resendEmailVerification } from "@studyflow/domain/participant-sign-in";
import { participantOf } from "../../app-env";
import type { AppDeps } from "../../deps";
import { participantAuth } from "../../middleware/auth";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent, messageSchema } from "../schemas";

const resendRequest = z.object({ email: z.string().trim().max(254) }).openapi("CaseResendVerificationRequest");

export function registerResendEmailVerification(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  const { clock } = deps;
  defineRoute(
    router,
    {
      method: "post",
      path: "/resend-email-verification",
      tags: ["participant auth"],
      summary: "Mail the verify-email link again",
      description:
        "case-backend's resendEmailVerification: a new link to the account's address (earlier links end); at most " +
        "one per minute (429 with Retry-After).",
      security: PARTICIPANT_SECURITY,
      middleware: [participantAuth(deps)],
      caseBody: resendRequest,
      bodyDescription: "The account's address",
      responses: {
        200: jsonContent(messageSchema, "sending"),
        ...errorResponses([400, 401, 429], { 400: "email is not the account's address" }),
      },
    },
    async (c) => {
      await resendEmailVerification(db, {
        userId: participantOf(c).userId,
        email: c.req.valid("json").email,
        now: new Date(clock()),
        url: deps.config.VERIFY_EMAIL_URL,
        ttlSeconds: deps.config.VERIFY_EMAIL_TOKEN_TTL_SECONDS,
      });
      return c.json({ message: "email sending initiated" }, 200);
    },
  );
}
