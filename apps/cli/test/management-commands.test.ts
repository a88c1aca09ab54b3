import { randomBytes } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, appRoles, auditLog, permissions, serviceAccounts } from "@studyflow/db";
import {
  ApiKeyRejected,
  hashApiKey,
  listServiceAccountApiKeys,
  SecretBox,
  verifyApiKey,
} from "@studyflow/domain/access";
import { upsertManagementUser } from "@studyflow/domain/management-users";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

/*
 * The commands over case-admin's management objects: management users, service accounts and
 * their keys, and permission:grant for every subject and resource type. Every change is audited
 * by the operator CLI, as the user-management routes audit theirs.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "flu" });
});
afterAll(async () => {
  await database.drop();
});

const run = (argv: string[]) => runCommandLine(database, argv);

/** Runs a command with --json and returns its one JSON object; fails the test on a non-zero exit. */
async function json<T = Record<string, unknown>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout) as T;
}

async function failure(argv: string[]) {
  const result = await run(argv);
  expect(result.stdout).toBe("");
  // The entry writes "error: <message>" to stderr.
  return { exitCode: result.exitCode, message: result.stderr.trim().replace(/^error: /, "") };
}

const audits = (action: string) =>
  database.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(asc(auditLog.id));

async function signedInUser(sub: string, isAdmin = false) {
  const { user } = await upsertManagementUser(
    database.db,
    { provider: "entra", sub, email: `${sub}@example.org`, username: `Name ${sub}`, imageUrl: "", isAdmin },
    new Date(),
  );
  return user;
}

const subjectPermissions = (subjectType: "management-user" | "service-account", subjectId: string) =>
  database.db
    .select({
      resourceType: permissions.resourceType,
      resourceKey: permissions.studyKey,
      action: permissions.action,
      limiter: permissions.limiter,
    })
    .from(permissions)
    .where(and(eq(permissions.subjectType, subjectType), eq(permissions.subjectId, subjectId)))
    .orderBy(asc(permissions.id));

describe("management-user:list, :show, :delete", () => {
  it("lists the users who signed in, oldest first, as text and JSON", async () => {
    expect(await json(["management-user:list"])).toEqual({ managementUsers: [] });
    const empty = await run(["management-user:list"]);
    expect(empty.stdout).toContain("0 management users");
    const ana = await signedInUser("ana", true);
    const ben = await signedInUser("ben");
    const listed = await json<{ managementUsers: { id: string; email: string; isAdmin: boolean }[] }>([
      "management-user:list",
    ]);
    expect(listed.managementUsers.map(({ id, email, isAdmin }) => ({ id, email, isAdmin }))).toEqual([
      { id: ana.id, email: "ana@example.org", isAdmin: true },
      { id: ben.id, email: "ben@example.org", isAdmin: false },
    ]);
    const text = await run(["management-user:list"]);
    expect(text.stdout).toContain("2 management users");
    expect(text.stdout).toMatch(new RegExp(`${ana.id}\\s+ana@example.org\\s+Name ana\\s+entra\\s+yes`));
  });

  it("shows one user with their permissions and app roles; unknown and malformed ids exit 1", async () => {
    const cara = await signedInUser("cara");
    await json([
      "permission:grant",
      "--subject",
      cara.id,
      "--study",
      "flu",
      "--action",
      "get-responses",
      "--limiter",
      '[{"surveyKey":"intake"}]',
    ]);
    await database.db
      .insert(appRoles)
      .values({ subjectType: "management-user", subjectId: cara.id, appName: "case-admin", role: "viewer" });
    const shown = await json<{
      managementUser: { id: string; sub: string };
      permissions: { resourceType: string; resourceKey: string; action: string; limiter: unknown }[];
      appRoles: { appName: string; role: string }[];
    }>(["management-user:show", "--id", cara.id.toUpperCase()]);
    expect(shown.managementUser).toMatchObject({ id: cara.id, sub: "cara" });
    expect(shown.permissions).toMatchObject([
      { resourceType: "study", resourceKey: "flu", action: "get-responses", limiter: [{ surveyKey: "intake" }] },
    ]);
    expect(shown.appRoles).toMatchObject([{ appName: "case-admin", role: "viewer" }]);
    const text = await run(["management-user:show", "--id", cara.id]);
    expect(text.stdout).toContain("1 permission\n");
    expect(text.stdout).toContain('get-responses  [{"surveyKey":"intake"}]');
    expect(text.stdout).toContain("1 app role\n");

    expect(await failure(["management-user:show", "--id", "00000000-0000-4000-8000-000000000000"])).toEqual({
      exitCode: 1,
      message: 'no management user "00000000-0000-4000-8000-000000000000"',
    });
    expect(await failure(["management-user:show", "--id", "cara"])).toEqual({
      exitCode: 1,
      message: 'management-user:show: --id must be a management user id (UUID, see management-user:list), got "cara"',
    });
    expect(await failure(["management-user:show"])).toEqual({
      exitCode: 1,
      message: "management-user:show: missing required flag --id",
    });
  });

  it("deletes a user with their permissions and app roles, audited by the operator CLI; twice exits 1", async () => {
    const dan = await signedInUser("dan");
    await json(["permission:grant", "--subject", dan.id, "--study", "*", "--action", "*"]);
    await database.db
      .insert(appRoles)
      .values({ subjectType: "management-user", subjectId: dan.id, appName: "case-admin", role: "admin" });
    const deleted = await json(["management-user:delete", "--id", dan.id]);
    expect(deleted).toEqual({
      deleted: { id: dan.id, email: "dan@example.org", sessions: 0, permissions: 1, appRoles: 1 },
    });
    expect(await subjectPermissions("management-user", dan.id)).toEqual([]);
    const remaining = await json<{ managementUsers: { id: string }[] }>(["management-user:list"]);
    expect(remaining.managementUsers.map((user) => user.id)).not.toContain(dan.id);
    const [audit] = (await audits("management-user.delete")).filter((row) => row.target === dan.id);
    expect(audit).toMatchObject({ actor: "operator-cli", details: { sub: "dan", permissions: 1, appRoles: 1 } });
    expect(await failure(["management-user:delete", "--id", dan.id])).toEqual({
      exitCode: 1,
      message: `no management user "${dan.id}"`,
    });
  });
});

describe("service-account:create, :list, :key:create, :delete", () => {
  it("creates an account (audited), lists it, gives it a key that acts as the account, deletes it with its keys", async () => {
    const created = await json<{ serviceAccount: { id: string; label: string; description: string } }>([
      "service-account:create",
      "--label",
      "nightly ETL",
      "--description",
      "exports responses at night",
    ]);
    const id = created.serviceAccount.id;
    expect(created.serviceAccount).toMatchObject({ label: "nightly ETL", description: "exports responses at night" });
    expect((await audits("service-account.create")).map((row) => [row.actor, row.target])).toEqual([
      ["operator-cli", id],
    ]);
    const listed = await json<{ serviceAccounts: { id: string; label: string; createdBy: string }[] }>([
      "service-account:list",
    ]);
    expect(listed.serviceAccounts).toMatchObject([{ id, label: "nightly ETL", createdBy: "operator-cli" }]);
    expect((await run(["service-account:list"])).stdout).toContain("1 service account (oldest first)");

    const before = Date.now();
    const key = await json<{ key: string; id: string; serviceAccountId: string; expiresAt: string }>([
      "service-account:key:create",
      "--id",
      id,
      "--label",
      "prod",
      "--expires-in-days",
      "7",
    ]);
    expect(key.serviceAccountId).toBe(id);
    expect(Date.parse(key.expiresAt) - before).toBeGreaterThanOrEqual(7 * 86_400_000 - 1_000);
    expect(Date.parse(key.expiresAt) - before).toBeLessThanOrEqual(7 * 86_400_000 + 5_000);
    expect(await verifyApiKey(database.db, key.key, new Date())).toEqual({
      subject: id,
      keyId: key.id,
      serviceAccountId: id,
    });
    const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    expect(row).toMatchObject({ keyHash: hashApiKey(key.key), createdBy: "operator-cli" });
    // The key is printed once and kept nowhere: the row holds its hash and first characters (no
    // sealed copy for a later reveal, as the API keeps), and the account's list (case-admin's too,
    // even one by the creator, as the API lists) shows only those.
    expect(JSON.stringify(row)).not.toContain(key.key.slice(11));
    expect(row).toMatchObject({ revealSealed: null, revealUntil: null });
    const shown = await listServiceAccountApiKeys(database.db, id);
    expect(shown.find((listed) => listed.id === key.id)?.key).toBe(`${key.key.slice(0, 11)}…`);
    const byCreator = await listServiceAccountApiKeys(database.db, id, {
      subject: "operator-cli",
      box: new SecretBox(randomBytes(32)),
      now: new Date(),
    });
    expect(byCreator.find((listed) => listed.id === key.id)).toMatchObject({
      key: `${key.key.slice(0, 11)}…`,
      revealed: false,
    });
    const [keyAudit] = (await audits("api-key.create")).filter((audit) => audit.target === key.id);
    expect(keyAudit).toMatchObject({ actor: "operator-cli", details: { serviceAccountId: id } });
    expect(JSON.stringify(keyAudit?.details)).not.toContain(key.key);
    // For people: the bare key on the first line.
    const text = await run(["service-account:key:create", "--id", id]);
    expect(text.stdout.split("\n")[0]).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);

    await json([
      "permission:grant",
      "--subject-type",
      "service-account",
      "--subject",
      id,
      "--study",
      "flu",
      "--action",
      "get-responses",
    ]);
    const deleted = await json(["service-account:delete", "--id", id]);
    expect(deleted).toEqual({ deleted: { id, label: "nightly ETL", apiKeys: 2, permissions: 1, appRoles: 0 } });
    await expect(verifyApiKey(database.db, key.key, new Date())).rejects.toBeInstanceOf(ApiKeyRejected);
    expect(await database.db.select().from(serviceAccounts).where(eq(serviceAccounts.id, id))).toEqual([]);
    expect(await subjectPermissions("service-account", id)).toEqual([]);
    expect((await audits("service-account.delete")).map((audit) => audit.target)).toEqual([id]);
  });

  it("refuses a missing or blank label, an unknown account, a bad lifetime; nothing written", async () => {
    const accountsBefore = (await database.db.select().from(serviceAccounts)).length;
    const keysBefore = (await database.db.select().from(apiKeys)).length;
    expect(await failure(["service-account:create"])).toEqual({
      exitCode: 1,
      message: "service-account:create: missing required flag --label",
    });
    expect(await failure(["service-account:create", "--label", "  "])).toEqual({
      exitCode: 1,
      message: "service-account:create: --label needs a non-empty value",
    });
    expect(await failure(["service-account:create", "--label", "x".repeat(201)])).toEqual({
      exitCode: 1,
      message: "label: longer than 200 characters",
    });
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect(await failure(["service-account:key:create", "--id", unknown])).toEqual({
      exitCode: 1,
      message: "service account not found",
    });
    expect(await failure(["service-account:key:create", "--id", unknown, "--expires-in-days", "401"])).toEqual({
      exitCode: 1,
      message: 'service-account:key:create: --expires-in-days must be a whole number from 1 to 400, got "401"',
    });
    expect(await failure(["service-account:delete", "--id", unknown])).toEqual({
      exitCode: 1,
      message: `no service account "${unknown}"`,
    });
    expect(await failure(["service-account:delete", "--id", "etl"])).toMatchObject({ exitCode: 1 });
    expect((await database.db.select().from(serviceAccounts)).length).toBe(accountsBefore);
    expect((await database.db.select().from(apiKeys)).length).toBe(keysBefore);
  });
});

describe("permission:grant for every subject and resource type", () => {
  it("grants messaging and users rights to a service account, and limited study rights, each audited", async () => {
    const { serviceAccount } = await json<{ serviceAccount: { id: string } }>([
      "service-account:create",
      "--label",
      "mailer",
    ]);
    const id = serviceAccount.id;
    const base = ["permission:grant", "--subject-type", "service-account", "--subject", id];
    const messaging = await json<{ granted: { id: string; resourceType: string }; alreadyHeld: boolean }>([
      ...base,
      "--resource-type",
      "messaging",
      "--resource-key",
      "study-email-templates",
      "--action",
      "*",
    ]);
    expect(messaging).toMatchObject({ granted: { resourceType: "messaging" }, alreadyHeld: false });
    await json([...base, "--resource-type", "users", "--resource-key", "*", "--action", "delete-users"]);
    await json([...base, "--study", "flu", "--action", "get-responses", "--limiter", '{"surveyKey":"weekly"}']);
    // A CASE action name is taken as case-admin grants it.
    await json([...base, "--resource-key", "flu", "--action", "update-study-rules"]);
    expect(await subjectPermissions("service-account", id)).toEqual([
      { resourceType: "messaging", resourceKey: "study-email-templates", action: "*", limiter: null },
      { resourceType: "users", resourceKey: "*", action: "delete-users", limiter: null },
      { resourceType: "study", resourceKey: "flu", action: "get-responses", limiter: [{ surveyKey: "weekly" }] },
      { resourceType: "study", resourceKey: "flu", action: "update-study-rules", limiter: null },
    ]);
    const grants = (await audits("permission.grant")).filter((row) => row.details.subjectId === id);
    expect(grants).toHaveLength(4);
    expect(grants[0]).toMatchObject({
      actor: "operator-cli",
      target: messaging.granted.id,
      details: { subjectType: "service-account", resourceType: "messaging", resourceKey: "study-email-templates" },
    });
    // The same grant again changes nothing and is no error.
    const again = await json([
      ...base,
      "--study",
      "flu",
      "--action",
      "get-responses",
      "--limiter",
      '[{"surveyKey":"weekly"}]',
    ]);
    expect(again).toMatchObject({ alreadyHeld: true });
    expect((await audits("permission.grant")).filter((row) => row.details.subjectId === id)).toHaveLength(4);
  });

  it("grants a token subject as before (audited now), and a signed-in user through their grant", async () => {
    const granted = await json<{ granted: Record<string, unknown> }>([
      "permission:grant",
      "--subject",
      "researcher-9",
      "--study",
      "flu",
      "--action",
      "run-study-action",
    ]);
    expect(granted.granted).toMatchObject({
      subjectType: "management-user",
      subjectId: "researcher-9",
      resourceType: "study",
      resourceKey: "flu",
      action: "run-study-action",
      limiter: null,
    });
    expect((await audits("permission.grant")).some((row) => row.details.subjectId === "researcher-9")).toBe(true);
    const text = await run(["permission:grant", "--subject", "researcher-9", "--study", "*", "--action", "*"]);
    expect(text.stdout).toMatch(/^granted "\*" on study "\*" to management-user researcher-9 \(permission \d+\)\n$/);
    const again = await run(["permission:grant", "--subject", "researcher-9", "--study", "*", "--action", "*"]);
    expect(again).toMatchObject({
      exitCode: 0,
      stdout: 'management-user researcher-9 already has "*" on study "*"; nothing changed\n',
    });
  });

  it("refuses bad combinations before writing anything", async () => {
    const before = (await database.db.select().from(permissions)).length;
    const account = (await json<{ serviceAccount: { id: string } }>(["service-account:create", "--label", "x"]))
      .serviceAccount.id;
    const cases: [string[], string][] = [
      [
        ["permission:grant", "--subject", "r", "--study", "flu", "--resource-key", "flu", "--action", "*"],
        "permission:grant: --study and --resource-key name the same thing: give one",
      ],
      [
        ["permission:grant", "--subject", "r", "--action", "*"],
        "permission:grant: --study or --resource-key is required",
      ],
      [
        ["permission:grant", "--subject", "r", "--resource-type", "messaging", "--study", "flu", "--action", "*"],
        "permission:grant: --study is for resource type study, not messaging",
      ],
      [
        ["permission:grant", "--subject", "r", "--subject-type", "robot", "--study", "flu", "--action", "*"],
        'permission:grant: --subject-type must be one of management-user, service-account; got "robot"',
      ],
      [
        ["permission:grant", "--subject", "r", "--resource-type", "files", "--resource-key", "x", "--action", "*"],
        'permission:grant: --resource-type must be one of study, messaging, users; got "files"',
      ],
      [
        ["permission:grant", "--subject", "r", "--study", "flu", "--action", "*", "--limiter", "[1]"],
        'permission:grant: --limiter must be a JSON array of objects of strings, e.g. [{"surveyKey":"intake"}]',
      ],
      [
        ["permission:grant", "--subject", "r", "--study", "flu", "--action", "*", "--limiter", "{"],
        expect.stringMatching(/^permission:grant: --limiter must be JSON: /),
      ],
      [
        [
          "permission:grant",
          "--subject",
          "r",
          "--resource-type",
          "messaging",
          "--resource-key",
          "sms",
          "--action",
          "*",
        ],
        'resourceKey: messaging keys are *, global-email-templates, study-email-templates, scheduled-emails, sms-templates, not "sms"',
      ],
      [
        [
          "permission:grant",
          "--subject",
          "r",
          "--resource-type",
          "users",
          "--resource-key",
          "*",
          "--action",
          "get-responses",
        ],
        'action: "get-responses" is not an action on users',
      ],
      [["permission:grant", "--subject", "r", "--study", "ghost", "--action", "get-responses"], 'no study "ghost"'],
      [
        [
          "permission:grant",
          "--subject-type",
          "service-account",
          "--subject",
          "00000000-0000-4000-8000-000000000000",
          "--study",
          "flu",
          "--action",
          "*",
        ],
        "service account not found",
      ],
      [
        ["permission:grant", "--subject", "00000000-0000-4000-8000-000000000000", "--study", "flu", "--action", "*"],
        "user not found",
      ],
      [
        [
          "permission:grant",
          "--subject-type",
          "service-account",
          "--subject",
          account,
          "--resource-type",
          "users",
          "--resource-key",
          "flu",
          "--action",
          "delete-users",
        ],
        'resourceKey: users permissions take resource key "*"',
      ],
    ];
    for (const [argv, message] of cases) {
      expect(await failure(argv), argv.join(" ")).toEqual({ exitCode: 1, message });
    }
    expect((await database.db.select().from(permissions)).length).toBe(before);
  });
});
