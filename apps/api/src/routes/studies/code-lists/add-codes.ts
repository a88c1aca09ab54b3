import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { MAX_CODES_PER_ADD, addStudyCodes, codeProblem, countStudyCodes } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent } from "../../schemas";
import { codeListParams } from "./code-list-params";

const codeSchema = z
  .string()
  .trim()
  .superRefine((code, ctx) => {
    const problem = codeProblem(code);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export function registerAddCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/{listKey}/codes",
      tags: ["code-lists"],
      summary: "Add codes to a study code list",
      description:
        `Adds 1 to ${MAX_CODES_PER_ADD} codes, in the order given (rules draw them in that order). Surrounding ` +
        "spaces are removed; a code the list already holds, or one given twice, is skipped and listed in `skipped`, " +
        "not an error. A list exists while it holds codes. Recorded in the audit log (`code-list.add`, with the " +
        "counts). Requires `manage-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: {
        params: codeListParams,
        body: jsonBody(
          z.object({
            codes: z
              .array(codeSchema)
              .min(1, "give at least one code")
              .max(MAX_CODES_PER_ADD, `at most ${MAX_CODES_PER_ADD} codes per request`)
              .openapi({ example: ["KIT-0001", "KIT-0002"] }),
          }),
        ),
      },
      responses: {
        200: jsonContent(
          z.object({
            added: z.number().int(),
            skipped: z.array(z.string()).openapi({ description: "codes already in the list or given twice" }),
            codeCount: z.number().int().openapi({ description: "codes in the list afterwards" }),
          }),
          "codes added",
        ),
        ...errorResponses([400, 401, 403, 404], {
          400: "no codes, too many, or an empty, overlong or multi-line code (the message names it)",
          404: "study not found",
        }),
      },
    },
    async (c) => {
      const { studyKey, listKey } = c.req.valid("param");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-code-lists");
      const result = await addStudyCodes(db, studyKey, listKey, c.req.valid("json").codes, who.subject);
      return c.json({ ...result, codeCount: await countStudyCodes(db, studyKey, listKey) }, 200);
    },
  );
}
