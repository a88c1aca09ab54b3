import { z } from "@hono/zod-openapi";
import { assertStudyPermission } from "@studyflow/domain/access";
import { MAX_CODES_PER_ADD, addStudyCodesReportingErrors } from "@studyflow/domain/study-config";
import { managementOf } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import type { ApiRouter } from "../../create-router";
import { defineRoute } from "../../define-route";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent, studyKeyParam } from "../../schemas";

const addCodesBody = z
  .object({
    listKey: z
      .string({ error: "listKey: required" })
      .transform((raw) => raw.trim())
      .pipe(z.string().min(1, "listKey: must not be blank").max(200, "listKey: is longer than 200 characters")),
    codes: z
      .array(z.string({ error: "codes: each code must be a string" }), { error: "codes: must be a list of strings" })
      .max(MAX_CODES_PER_ADD, `codes: at most ${MAX_CODES_PER_ADD} codes per request`)
      .nullable()
      .optional(),
  })
  .openapi("StudyCodeListAdd");

export function registerAddCodes(router: ApiRouter, deps: AppDeps) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/codes",
      bothSlashes: true,
      tags: ["code-lists"],
      summary: "Add codes to a code list (CASE)",
      description:
        "Each code trimmed; a code that cannot be added (empty, already in the list, too long, with control " +
        "characters) is named in `errors` and the others are added, in the order given, in one transaction. " +
        `At most ${MAX_CODES_PER_ADD} codes per request. Recorded in the audit log (\`code-list.add\`, with the ` +
        "counts). Requires `manage-study-code-lists`.",
      security: MANAGEMENT_SECURITY,
      request: { params: studyKeyParam },
      caseBody: addCodesBody,
      responses: {
        200: jsonContent(z.object({ errors: z.array(z.string()) }), "codes added; those not added named"),
        ...errorResponses([400, 401, 403, 404], { 400: "no listKey, or codes not a list of strings" }),
      },
    },
    async (c) => {
      const { studyKey } = c.req.valid("param");
      const { listKey, codes } = c.req.valid("json");
      const who = managementOf(c);
      await assertStudyPermission(db, who, studyKey, "manage-study-code-lists");
      const errors = await addStudyCodesReportingErrors(db, studyKey, listKey, codes ?? [], who.subject);
      return c.json({ errors }, 200);
    },
  );
}
