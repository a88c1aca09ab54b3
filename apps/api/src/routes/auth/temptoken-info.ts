import { z } from "@hono/zod-openapi";
import { checkInstanceId } from "../../case-compat";
import type { AppDeps } from "../../deps";
import type { RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent } from "../schemas";
import { tempTokenFailures, tempTokenHolder } from "./temp-token";

const infoRequest = z
  .object({ tempToken: z.string().max(200), instanceID: z.string().max(100).optional() })
  .openapi("CaseTempTokenInfoRequest");

export function registerTempTokenInfo(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const holderOf = tempTokenHolder(deps);
  defineRoute(
    router,
    {
      method: "post",
      path: "/temptoken-info",
      tags: ["participant auth"],
      summary: "Whose a survey-login token is",
      description:
        "case-backend's getTempTokenInfo: the account a usable survey-login token (a mailed link) belongs to, so the " +
        "app can ask that account's password. Unknown, used and expired tokens answer 401 (case-backend: 400).",
      middleware: [tempTokenFailures(limiter)],
      caseBody: infoRequest,
      bodyDescription: "A survey-login token from a mailed link",
      responses: {
        200: jsonContent(z.object({ userID: z.string(), email: z.string() }), "the token's account"),
        ...errorResponses([400, 401, 429], { 401: "invalid token" }),
      },
    },
    async (c) => {
      const { tempToken, instanceID } = c.req.valid("json");
      checkInstanceId(deps.config, instanceID);
      const holder = await holderOf(tempToken, ["survey-login"]);
      return c.json({ userID: holder.userId, email: holder.email }, 200);
    },
  );
}
