import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { Conflict } from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY } from "../schemas";

/*
 * Both phone routes in one file: they give the same refusal for the same reason. case-backend
 * keeps a phone number as a contact and verifies it by SMS; studyflow has no SMS gateway, so it
 * cannot verify a number and keeps none. 409 ("not in a state that allows this"), not a 5xx:
 * nothing failed, and a participant app shows the message.
 */
export const NO_SMS_GATEWAY =
  "phone numbers are not supported: this studyflow deployment has no SMS gateway to verify them";

const refusal = errorResponses([400, 401, 409], { 409: NO_SMS_GATEWAY });

const changeBody = caseJsonBody(
  z.object({
    newPhoneNumber: z.string().max(50, "newPhoneNumber is longer than 50 characters").optional(),
    password: z.string().max(1_024, "password is too long").optional(),
  }),
  "`newPhoneNumber` and `password`, as case-backend takes them",
);

const changeRoute = createRoute({
  method: "post",
  path: "/change-phone-number",
  tags: ["user"],
  summary: "Set a phone number (CASE): refused, no SMS gateway",
  description: `Always 409: ${NO_SMS_GATEWAY}.`,
  security: PARTICIPANT_SECURITY,
  middleware: [changeBody.middleware] as const,
  request: { body: changeBody.body },
  responses: refusal,
});

const verificationRoute = createRoute({
  method: "get",
  path: "/request-phone-number-verification",
  tags: ["user"],
  summary: "Request an SMS code for the phone number (CASE): refused, no SMS gateway",
  description: `Always 409: ${NO_SMS_GATEWAY}.`,
  security: PARTICIPANT_SECURITY,
  responses: errorResponses([401, 409], { 409: NO_SMS_GATEWAY }),
});

export function registerPhoneNumber(router: OpenAPIHono<AppEnv>) {
  router.openapi(changeRoute, () => {
    throw new Conflict(NO_SMS_GATEWAY);
  });
  router.openapi(verificationRoute, () => {
    throw new Conflict(NO_SMS_GATEWAY);
  });
}
