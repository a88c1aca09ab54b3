import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { STUDY_VARIABLE_TYPES, assertStudyPermission, setStudyVariable } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentStudyVariable, studyVariableSchema } from "../../../presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent } from "../../schemas";
import { variableParams } from "./variable-params";

const route = createRoute({
  method: "put",
  path: "/{key}",
  tags: ["study-variables"],
  summary: "Define a study variable or set its value",
  description:
    "A new variable needs its `type` (string, int, float, boolean, date) and a `value`; an existing one takes a " +
    "`value` of its type, or a new `type` together with a value of that type. Values are checked as the rules " +
    "read them: int a whole number, float a finite number, date Unix seconds or an ISO 8601 date or date-time " +
    "with offset (stored as Unix seconds). Rules that read the variable as another type fail after a type " +
    "change (recorded as rule failures). Recorded in the audit log (`variable.define`, `variable.set` with the " +
    "value before). Requires `manage-study-variables`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: variableParams,
    body: jsonBody(
      z
        .strictObject({
          type: z.enum(STUDY_VARIABLE_TYPES).optional().openapi({ description: "needed to define the variable" }),
          value: z
            .union([z.string(), z.number(), z.boolean()], { error: "value must be a string, number or boolean" })
            .openapi({ example: 250 }),
        })
        .openapi("StudyVariableChange"),
    ),
  },
  responses: {
    200: jsonContent(z.object({ variable: studyVariableSchema }), "the variable's new value"),
    201: jsonContent(z.object({ variable: studyVariableSchema }), "the variable, defined"),
    ...errorResponses([400, 401, 403, 404], {
      400: "no value, a value not of the type, or no type for a new variable (the message names the field)",
      404: "study not found",
    }),
  },
});

export function registerSetVariable(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey, key } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "manage-study-variables");
    const { variable, created } = await setStudyVariable(db, studyKey, key, c.req.valid("json"), who.subject);
    const body = { variable: presentStudyVariable(variable) };
    return created ? c.json(body, 201) : c.json(body, 200);
  });
}
