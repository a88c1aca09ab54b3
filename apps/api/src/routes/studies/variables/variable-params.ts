import { keyString, studyKeyParam } from "../../schemas";

/** The path of one study variable. */
export const variableParams = studyKeyParam.extend({
  key: keyString("key").openapi({ param: { name: "key", in: "path" }, example: "kitStock" }),
});
