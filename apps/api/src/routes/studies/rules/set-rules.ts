import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, getRulesVersion, setStudyRules } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentRulesVersionSummary, rulesVersionSummarySchema } from "../../../presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, studyKeyParam } from "../../schemas";

/** A study's rule set is small; this bound stops a body from keeping the validator busy. */
const MAX_RULES = 1_000;

const route = createRoute({
  method: "post",
  path: "/",
  tags: ["rules"],
  summary: "Store a rule set as the study's next rules version",
  description:
    "The rules are checked with the engine's validator first; an invalid set is a 400 naming the JSON path of " +
    "each problem (`rules[2].data[1].exp: …`) and stores nothing. The new version is current at once: the next " +
    "participant event runs it. Recorded in the audit log (`rules.set`). Requires `manage-rules`.",
  security: MANAGEMENT_SECURITY,
  request: {
    params: studyKeyParam,
    body: jsonBody(
      z.object({
        rules: z
          .array(z.unknown())
          .max(MAX_RULES, `at most ${MAX_RULES} rules`)
          .openapi({ description: "rule expressions in the CASE study-engine JSON form: {name, data?}" }),
      }),
    ),
  },
  responses: {
    201: jsonContent(rulesVersionSummarySchema, "the stored version"),
    ...errorResponses([400, 401, 403, 404], {
      400: "invalid rules (the message names the JSON path) or no rules array",
      404: "study not found",
    }),
  },
});

export function registerSetRules(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const { studyKey } = c.req.valid("param");
    const who = managementOf(c);
    await assertStudyPermission(db, who, studyKey, "manage-rules");
    const { rules } = c.req.valid("json");
    const version = await setStudyRules(db, studyKey, rules, who.subject);
    const stored = await getRulesVersion(db, studyKey, version);
    return c.json(presentRulesVersionSummary({ ...stored, ruleCount: stored.rules.length }), 201);
  });
}
