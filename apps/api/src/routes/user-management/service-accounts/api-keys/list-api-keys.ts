import { z } from "@hono/zod-openapi";
import { listServiceAccountApiKeys, secretBoxOfSettings } from "@studyflow/domain/access";
import type { AppDeps } from "../../../../deps";
import type { ApiRouter } from "../../../create-router";
import { defineRoute } from "../../../define-route";
import { errorResponses } from "../../../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../../../schemas";
import { ADMIN_ONLY, TAGS, adminOf, now } from "../../user-management-contract";
import { accountIdParam, caseApiKeySchema, presentApiKey } from "../service-account-schemas";

export function registerListApiKeys(router: ApiRouter, deps: AppDeps) {
  // Opens the sealed copy of a new key for its creator's first key list (none without MANAGEMENT_SECRETS_KEY).
  const revealBox = secretBoxOfSettings(deps.config);
  defineRoute(
    router,
    {
      method: "get",
      path: "/",
      tags: TAGS,
      summary: "List a service account's API keys (CASE, admin)",
      description:
        "Each key with a hint in `key`: its first characters and `…` (case-backend lists keys whole). A key is " +
        "shown to its creator once: in the answer that creates it and, within 10 minutes of that, in the creator's " +
        "first list, whole (what case-admin's dialog shows and copies; that answer is `Cache-Control: no-store` and " +
        "audited as `api-key.reveal`). Another admin's list shows the hint and leaves the creator's turn. Only the " +
        "key's SHA-256 is kept after that, so a lost key is replaced, not read again.",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      responses: {
        200: jsonContent(z.object({ apiKeys: z.array(caseApiKeySchema) }), "the keys"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      const keys = await listServiceAccountApiKeys(deps.database.db, serviceAccountID, {
        subject: who.subject,
        box: revealBox,
        now: now(deps),
      });
      // a list showing a key whole: no cache (browser, proxy) may keep a copy
      if (keys.some((key) => key.revealed)) c.header("Cache-Control", "no-store");
      return c.json({ apiKeys: keys.map(presentApiKey) }, 200);
    },
  );
}
