import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_PROFILES_PER_USER, addProfile } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { caseJsonBody } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { caseProfileInput, presentProfile, profileChangesOf, profileEnvelope } from "./case-user-schema";

const body = caseJsonBody(
  caseProfileInput,
  "CASE's Profile: `alias`, `avatarID`, `consentConfirmedAt` are taken; `id`, `mainProfile` and `createdAt` are the server's",
);

const route = createRoute({
  method: "post",
  path: "/profiles",
  tags: ["user"],
  summary: "Add a profile to the account (CASE)",
  description:
    `A new profile is never the main one. An account holds at most ${MAX_PROFILES_PER_USER} profiles ` +
    "(case-backend answers 500 at its limit; studyflow 409).",
  security: PARTICIPANT_SECURITY,
  middleware: [body.middleware] as const,
  request: { body: body.body },
  responses: {
    200: jsonContent(profileEnvelope, "the new profile"),
    ...errorResponses([400, 401, 409], { 409: `the account holds ${MAX_PROFILES_PER_USER} profiles already` }),
  },
});

export function registerAddProfile(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  router.openapi(route, async (c) => {
    const created = await addProfile(db, participantOf(c).userId, profileChangesOf(c.req.valid("json")));
    return c.json(presentProfile(created), 200);
  });
}
