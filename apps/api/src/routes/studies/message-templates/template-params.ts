import { keyString, studyKeyParam } from "../../schemas";

/** The path of one message template: its message type and language. */
export const templateParams = studyKeyParam.extend({
  messageType: keyString("messageType").openapi({
    param: { name: "messageType", in: "path" },
    example: "weekly-reminder",
  }),
  language: keyString("language").openapi({
    param: { name: "language", in: "path", description: "a language tag such as en or de-CH" },
    example: "en",
  }),
});
