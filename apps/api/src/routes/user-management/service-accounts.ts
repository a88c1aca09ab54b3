import { z, type OpenAPIHono } from "@hono/zod-openapi";
import {
  createServiceAccount,
  createServiceAccountApiKey,
  deleteServiceAccount,
  deleteServiceAccountApiKey,
  listServiceAccountApiKeys,
  listServiceAccounts,
  readServiceAccount,
  secretBoxOfSettings,
  updateServiceAccount,
} from "@studyflow/domain";
import type { AppEnv } from "../../app-env";
import { caseRoute } from "../../case-compat";
import type { AppDeps } from "../../deps";
import { errorResponses } from "../openapi-errors";
import { MANAGEMENT_SECURITY, jsonContent } from "../schemas";
import {
  ADMIN_ONLY,
  TAGS,
  accountIdParam,
  accountKeyParams,
  adminOf,
  caseApiKeySchema,
  caseServiceAccountSchema,
  now,
  presentApiKey,
  presentServiceAccount,
  successSchema,
} from "./shared";

const accountProps = z.object({
  label: z.string().max(200),
  description: z.string().max(2000).optional(),
});

export function registerServiceAccountRoutes(router: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  // Seals a new key for its creator's first key list; without MANAGEMENT_SECRETS_KEY (production
  // without a sign-in) no copy is kept and the key is shown only in the creation's answer.
  const revealBox = secretBoxOfSettings(deps.config);

  caseRoute(
    router,
    {
      method: "get",
      path: "/service-accounts",
      tags: TAGS,
      summary: "List service accounts (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      responses: {
        200: jsonContent(z.object({ serviceAccounts: z.array(caseServiceAccountSchema) }), "the accounts"),
        ...errorResponses([401, 403], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      return c.json({ serviceAccounts: (await listServiceAccounts(db)).map(presentServiceAccount) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/service-accounts",
      tags: TAGS,
      summary: "Create a service account (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      body: accountProps,
      responses: {
        200: jsonContent(z.object({ serviceAccount: caseServiceAccountSchema }), "the new account"),
        ...errorResponses([400, 401, 403], { 400: "blank or overlong label", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const row = await createServiceAccount(db, c.req.valid("json"), who.subject, now(deps));
      return c.json({ serviceAccount: presentServiceAccount(row) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/service-accounts/{serviceAccountID}",
      tags: TAGS,
      summary: "Get a service account (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ serviceAccount: caseServiceAccountSchema }), "the account"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      return c.json({ serviceAccount: presentServiceAccount(await readServiceAccount(db, serviceAccountID)) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "put",
      path: "/service-accounts/{serviceAccountID}",
      tags: TAGS,
      summary: "Update a service account's label and description (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      body: accountProps,
      bothSlashes: false,
      responses: {
        200: jsonContent(successSchema, "updated"),
        ...errorResponses([400, 401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      await updateServiceAccount(db, serviceAccountID, c.req.valid("json"), who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "delete",
      path: "/service-accounts/{serviceAccountID}",
      tags: TAGS,
      summary: "Delete a service account (CASE, admin)",
      description: "Deletes the account with its API keys (they stop working at once), permissions and app roles.",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      bothSlashes: false,
      responses: {
        200: jsonContent(successSchema, "deleted"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      await deleteServiceAccount(db, serviceAccountID, who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "get",
      path: "/service-accounts/{serviceAccountID}/api-keys",
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
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ apiKeys: z.array(caseApiKeySchema) }), "the keys"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      const keys = await listServiceAccountApiKeys(db, serviceAccountID, {
        subject: who.subject,
        box: revealBox,
        now: now(deps),
      });
      // a list showing a key whole: no cache (browser, proxy) may keep a copy
      if (keys.some((key) => key.revealed)) c.header("Cache-Control", "no-store");
      return c.json({ apiKeys: keys.map(presentApiKey) }, 200);
    },
  );

  caseRoute(
    router,
    {
      method: "post",
      path: "/service-accounts/{serviceAccountID}/api-keys",
      tags: TAGS,
      summary: "Create an API key for a service account (CASE, admin)",
      description:
        "`expiresAt` in Unix seconds; absent or 0: 90 days (case-backend: no expiry); more than 400 days away: 400. " +
        "The answer carries the key as `apiKey.key` besides case-backend's `success` (not cached: " +
        "`Cache-Control: no-store`). A sealed copy waits 10 minutes at most for the creator's first key list, " +
        "which shows it once more (case-admin shows a new key only there); every other list shows a hint.",
      security: MANAGEMENT_SECURITY,
      request: { params: accountIdParam },
      body: z.object({ expiresAt: z.number().int().nonnegative().optional() }),
      bothSlashes: false,
      responses: {
        200: jsonContent(z.object({ success: z.literal(true), apiKey: caseApiKeySchema }), "the new key"),
        ...errorResponses([400, 401, 403], { 400: "unknown account or bad expiresAt", 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID } = c.req.valid("param");
      const { expiresAt } = c.req.valid("json");
      const created = await createServiceAccountApiKey(db, {
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

  caseRoute(
    router,
    {
      method: "delete",
      path: "/service-accounts/{serviceAccountID}/api-keys/{apiKeyID}",
      tags: TAGS,
      summary: "Delete a service account's API key (CASE, admin)",
      security: MANAGEMENT_SECURITY,
      request: { params: accountKeyParams },
      bothSlashes: false,
      responses: {
        200: jsonContent(successSchema, "deleted"),
        ...errorResponses([401, 403, 404], { 403: ADMIN_ONLY }),
      },
    },
    async (c) => {
      const who = adminOf(c);
      const { serviceAccountID, apiKeyID } = c.req.valid("param");
      await deleteServiceAccountApiKey(db, serviceAccountID, apiKeyID, who.subject, now(deps));
      return c.json({ success: true as const }, 200);
    },
  );
}
