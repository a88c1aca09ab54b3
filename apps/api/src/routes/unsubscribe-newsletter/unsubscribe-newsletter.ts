import { z } from "@hono/zod-openapi";
import { unsubscribeNewsletter } from "@studyflow/domain/participant-accounts";
import { addressKeys } from "../../client-address";
import type { AppDeps } from "../../deps";
import { rateLimit, type RateLimiter } from "../../rate-limit";
import type { ApiRouter } from "../create-router";
import { defineRoute } from "../define-route";
import { errorResponses } from "../openapi-errors";
import { jsonContent, messageSchema } from "../schemas";

/**
 * Unusable tokens per client address: 256-bit tokens cannot be guessed, so this only bounds the
 * load one client can cause; a person clicks the link once or twice.
 */
const FAILED_TOKENS_PER_ADDRESS = 20;

export function registerUnsubscribeNewsletter(router: ApiRouter, deps: AppDeps, limiter: RateLimiter) {
  const db = deps.database.db;
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: ["user"],
      summary: "Unsubscribe from the newsletter with a mailed token (CASE)",
      description:
        "No sign-in: the token of an unsubscribe link. As in case-backend the token stays usable until it expires " +
        "(every newsletter carries it); an unknown or expired one is a 401 (case-backend: 400).",
      caseBody: z.object({
        token: z.string().min(1, "token is required").max(200, "token is longer than 200 characters"),
      }),
      bodyDescription: "`token` from the newsletter's unsubscribe link",
      afterBody: [
        rateLimit(limiter, {
          name: "unsubscribe-newsletter:address",
          limit: FAILED_TOKENS_PER_ADDRESS,
          windowSeconds: 3_600,
          keys: (c) => addressKeys(c),
          count: { failures: [401] },
          message: "too many invalid tokens from this address; try again later",
        }),
      ],
      responses: {
        200: jsonContent(messageSchema, "unsubscribed"),
        ...errorResponses([400, 401, 429], { 401: "invalid or expired token" }),
      },
    },
    async (c) => {
      await unsubscribeNewsletter(db, c.req.valid("json").token, new Date(deps.clock()));
      return c.json({ message: "newsletter unsubscribed" }, 200);
    },
  );
}
