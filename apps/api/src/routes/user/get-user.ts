import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { loadCaseUser } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
import { openapiBothSlashes } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { PARTICIPANT_SECURITY, jsonContent } from "../schemas";
import { userEnvelope } from "./case-user-schema";

const route = createRoute({
  method: "get",
  path: "/",
  tags: ["user"],
  summary: "The signed-in participant's account (CASE)",
  description: "Account, profiles (main first), contact preferences and contact address, as CASE's `user`.",
  security: PARTICIPANT_SECURITY,
  responses: {
    200: jsonContent(userEnvelope, "the account"),
    ...errorResponses([401, 404], { 404: "the account is gone" }),
  },
});

export function registerGetUser(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  openapiBothSlashes(router, route, async (c) => {
    return c.json({ user: await loadCaseUser(db, participantOf(c).userId) }, 200);
  });
}
