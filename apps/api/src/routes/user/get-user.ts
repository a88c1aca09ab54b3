import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { loadCaseUser } from "@studyflow/domain";
import { participantOf, type AppEnv } from "../../app-env";
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
  const handler = async (c: Context<AppEnv>) => c.json({ user: await loadCaseUser(db, participantOf(c).userId) }, 200);
  router.openapi(route, handler);
  // gin serves the group root at /v1/user/ (and /v1/user by redirect). Under a mount, "/" is the
  // mount point itself, so the slashed twin needs a pattern that matches only an empty rest.
  router.get("/:trailingSlash{/?}", handler);
}
