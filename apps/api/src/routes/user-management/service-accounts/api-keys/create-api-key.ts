import { z } from "@hono/zod-openapi";
import { createServiceAccountApiKey, secretBoxOfSettings } from "@studyflow/domain/access";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { accountIdParam, caseApiKeySchema, presentApiKey } from "../service-account-schemas";

export function registerCreateApiKey(router: ApiRouter, deps: AppDeps) {
  // Seals a new key for its creator's first key list; without MANAGEMENT_SECRETS_KEY (production
  // without a sign-in) no copy is kept and the key is shown only in the creation's answer.
  const revealBox = secretBoxOfSettings(deps.config);
  defineRoute(
    router,
    {
      method: "post",
      path: "/",
      tags: TAGS,
      summary: "Create an API key for a service account (CASE, admin)",
      description:
        "`expiresAt` in Unix seconds; absent or 0: 90 days (case-backend: no expiry); more than 400 days away: 400. " +
        "The answer carries the key as `apiKey.key` besides case-backend's `success` (not cached: " +
        "`Cache-Control: no-store`). A sealed copy waits 10 minutes at most for the creator's first key list, " +
        "which shows it once more (case-admin shows a new key only there); every other list shows a hint.",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      caseBody: z.object({ expiresAt: z.number().int().nonnegative().optional() }),
      responses: {
        200: jsonContent(z.object({ success: z.literal(true), apiKey: caseApiKeySchema }), "the new key"),
        ...errorResponses([400, 401, 403], { 400: "unknown account or bad expiresAt", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      const { expiresAt } = c.req.valid("json");
      const created = await createServiceAccountApiKey(deps.database.db, {
        serviceAccountId: serviceAccountID,
        createdBy: who.subject,
        now: now(deps),
        revealBox,
        ...(expiresAt ? { expiresAt: new Date(expiresAt * 1000) } : {}),
      });
      // an answer holding the key: no cache (browser, proxy) may keep a copy
      c.header("Cache-Control", "no-store");
      return c.json({ success: true as const, apiKey: presentApiKey(created.apiKey) }, 200);
    },
  );
}
