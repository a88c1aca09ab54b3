import { z } from "@hono/zod-openapi";
import { Conflict } from "@studyflow/domain/errors";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY } from "../schemas";
import { NO_SMS_GATEWAY } from "./no-sms-gateway";

const changePhoneNumberRequest = z.object({
  newPhoneNumber: z.string().max(50, "newPhoneNumber is longer than 50 characters").optional(),
  password: z.string().max(1_024, "password is too long").optional(),
});

export function registerChangePhoneNumber(router: ApiRouter) {
  defineRoute(
    router,
    {
      method: "post",
      path: "/change-phone-number",
      tags: ["user"],
      summary: "Set a phone number (CASE): refused, no SMS gateway",
      description: `Always 409: ${NO_SMS_GATEWAY}.`,
      security: PARTICIPANT_SECURITY,
      caseBody: changePhoneNumberRequest,
      bodyDescription: "`newPhoneNumber` and `password`, as case-backend takes them",
      responses: errorResponses([400, 401, 409], { 409: NO_SMS_GATEWAY }),
    },
    () => {
      throw new Conflict(NO_SMS_GATEWAY);
    },
  );
}
