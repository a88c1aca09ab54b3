import { Conflict } from "@studyflow/domain/errors";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY } from "../schemas";
import { NO_SMS_GATEWAY } from "./no-sms-gateway";

export function registerRequestPhoneNumberVerification(router: ApiRouter) {
  defineRoute(
    router,
    {
      method: "get",
      path: "/request-phone-number-verification",
      tags: ["user"],
      summary: "Request an SMS code for the phone number (CASE): refused, no SMS gateway",
      description: `Always 409: ${NO_SMS_GATEWAY}.`,
      security: PARTICIPANT_SECURITY,
      responses: errorResponses([401, 409], { 409: NO_SMS_GATEWAY }),
    },
    () => {
      throw new Conflict(NO_SMS_GATEWAY);
    },
  );
}
