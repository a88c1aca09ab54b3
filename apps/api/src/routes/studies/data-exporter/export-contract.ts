import { z } from "@hono/zod-openapi";
import { errorResponses } from "../../openapi-errors";
import { jsonContent } from "../../schemas";
import { startExportAnswer } from "./start-export";

/** The answers of an export's start; `item` is what the export holds, in the singular ("response"). */
export const startExportResponses = (item: string, invalidInput: string) => ({
  200: jsonContent(startExportAnswer, `the task, recorded and queued; or \`{error}\` when no ${item} matches`),
  ...errorResponses([400, 401, 403, 404, 503], {
    400: invalidInput,
    404: "study not found",
    503: "the job queue is unavailable",
  }),
});

/** The answers of a count of what an export would hold. */
export const exportCountResponses = (invalidInput: string) => ({
  200: jsonContent(z.object({ count: z.number().int() }), "how many"),
  ...errorResponses([400, 401, 403, 404], {
    400: invalidInput,
    404: "study not found",
  }),
});
