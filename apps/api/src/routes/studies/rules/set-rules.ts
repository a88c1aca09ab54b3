import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { assertStudyPermission, getRulesVersion, setStudyRules } from "@studyflow/domain";
import { managementOf, type AppEnv } from "../../../app-env";
import type { AppDeps } from "../../../deps";
import { presentRulesVersionSummary, rulesVersionSummarySchema } from "../../../presenters/study";
import { errorResponses } from "../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonBody, jsonContent, ruleSetBody, studyKeyParam } from "../../schemas";

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
    body: jsonBody(ruleSetBody),
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
