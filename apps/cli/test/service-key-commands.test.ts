import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, auditLog } from "@studyflow/db";
import { hashApiKey, verifyApiKey } from "@studyflow/domain/access";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { parseCommandLine } from "../src/index";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** Runs a command line as the entry does; returns stdout, stderr, and the exit code it would have. */
const run = (argv: string[]) => runCommandLine(database, argv);

interface CreatedJson {
  key: string;
  id: string;
  subject: string;
  label: string;
  keyPrefix: string;
  createdAt: string;
  expiresAt: string;
}
interface ListedJson {
  apiKeys: {
    id: string;
    subject: string;
    label: string;
    keyPrefix: string;
    createdBy: string;
    createdAt: string;
    expiresAt: string;
    revokedAt: string | null;
    lastUsedAt: string | null;
    status: string;
  }[];
}

async function createKey(argv: string[]): Promise<CreatedJson> {
  const result = await run(["service-key:create", ...argv, "--json"]);
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toBe("");
  expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
  return JSON.parse(result.stdout) as CreatedJson;
}

describe("service-key:create", () => {
  it("prints the key once (JSON), stores only its hash, and the key authenticates as the subject", async () => {
    const before = Date.now();
    const created = await createKey(["--subject", "svc-etl", "--label", "nightly ETL", "--expires-in-days", "30"]);
    expect(created).toMatchObject({ subject: "svc-etl", label: "nightly ETL" });
    expect(created.key).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    expect(created.key.startsWith(created.keyPrefix)).toBe(true);
    const lifetime = Date.parse(created.expiresAt) - before;
    expect(lifetime).toBeGreaterThanOrEqual(30 * 86_400_000 - 1_000);
    expect(lifetime).toBeLessThanOrEqual(30 * 86_400_000 + 5_000);
    const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, created.id));
    expect(row).toMatchObject({ keyHash: hashApiKey(created.key), createdBy: "operator-cli", revokedAt: null });
    expect(await verifyApiKey(database.db, created.key, new Date())).toEqual({
      subject: "svc-etl",
      keyId: created.id,
      serviceAccountId: null,
    });
    const [audit] = await database.db.select().from(auditLog).where(eq(auditLog.target, created.id));
    expect(audit).toMatchObject({ action: "service-key.create", actor: "operator-cli" });
    expect(JSON.stringify(audit?.details)).not.toContain(created.key);
  });

  it("prints the bare key first for people, then its fields and how to grant it rights", async () => {
    const result = await run(["service-key:create", "--subject", "svc-human"]);
    expect(result.exitCode).toBe(0);
    const [key, ...rest] = result.stdout.trimEnd().split("\n");
    expect(key).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    const text = rest.join("\n");
    expect(text).toMatch(/^subject\s+svc-human$/m);
    expect(text).toMatch(/^expires\s+\d{4}-\d\d-\d\dT/m);
    expect(text).toContain("shown this once");
    expect(text).toContain("permission:grant --subject svc-human");
    // 90 days by default
    const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.subject, "svc-human"));
    const days = ((row?.expiresAt.getTime() ?? 0) - (row?.createdAt.getTime() ?? 0)) / 86_400_000;
    expect(Math.round(days)).toBe(90);
  });

  it("refuses bad flags with exit 1 and a message, creating nothing", async () => {
    const cases: [string[], RegExp][] = [
      [[], /missing required flag --subject/],
      [["--subject", "  "], /--subject needs a non-empty value/],
      [["--subject", "s", "--expires-in-days", "0"], /--expires-in-days must be a whole number from 1 to 400, got "0"/],
      [["--subject", "s", "--expires-in-days", "401"], /--expires-in-days must be a whole number from 1 to 400/],
      [["--subject", "s", "--expires-in-days", "ten"], /--expires-in-days must be a whole number/],
      [["--subject", "s", "--admin"], /unknown flag --admin/],
      [["--subject", "s", "--label", "x".repeat(201)], /label is longer than 200 characters/],
    ];
    const count = async () => (await database.db.select().from(apiKeys)).length;
    const before = await count();
    for (const [argv, message] of cases) {
      const result = await run(["service-key:create", ...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect((JSON.parse(result.stderr) as { error: string }).error).toMatch(message);
      expect(result.stdout).toBe("");
    }
    expect(await count()).toBe(before);
  });
});

describe("service-key:list and service-key:revoke", () => {
  it("lists keys without secrets, filters by subject, and shows a revocation", async () => {
    const first = await createKey(["--subject", "svc-listed", "--label", "first"]);
    const second = await createKey(["--subject", "svc-listed", "--label", "second"]);
    await createKey(["--subject", "svc-other"]);

    const revoked = await run(["service-key:revoke", "--id", first.id, "--json"]);
    expect(revoked.exitCode).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      revoked: { id: first.id, subject: "svc-listed", label: "first", keyPrefix: first.keyPrefix },
    });
    await expect(verifyApiKey(database.db, first.key, new Date())).rejects.toThrow("revoked api key");
    await expect(verifyApiKey(database.db, second.key, new Date())).resolves.toMatchObject({ subject: "svc-listed" });

    const listed = await run(["service-key:list", "--subject", "svc-listed", "--json"]);
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).not.toContain(first.key);
    expect(listed.stdout).not.toContain(hashApiKey(first.key));
    const { apiKeys: keys } = JSON.parse(listed.stdout) as ListedJson;
    expect(keys.map((key) => [key.label, key.status])).toEqual([
      ["second", "active"],
      ["first", "revoked"],
    ]);
    expect(Object.keys(keys[0]!).sort()).toEqual(
      [
        "id",
        "subject",
        "label",
        "keyPrefix",
        "createdBy",
        "createdAt",
        "expiresAt",
        "revokedAt",
        "lastUsedAt",
        "status",
      ].sort(),
    );
    expect(keys[1]?.revokedAt).toEqual(expect.any(String));
    expect(keys[0]?.lastUsedAt).toEqual(expect.any(String));

    const all = JSON.parse((await run(["service-key:list", "--json"])).stdout) as ListedJson;
    expect(all.apiKeys.map((key) => key.subject)).toEqual(expect.arrayContaining(["svc-listed", "svc-other"]));
  });

  it("lists for people as a table with a header, and says when there is nothing", async () => {
    const created = await createKey(["--subject", "svc-table", "--label", "reports"]);
    const table = await run(["service-key:list", "--subject", "svc-table"]);
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe('1 service key of subject "svc-table" (most recent first)');
    expect(lines[1]).toMatch(/^id\s+subject\s+label\s+prefix\s+created\s+expires\s+revoked\s+last used\s+status$/);
    expect(lines[2]).toContain(created.id);
    expect(lines[2]).toContain(`${created.keyPrefix}…`);
    expect(lines[2]).toMatch(/reports.*\s-\s+-\s+active$/);
    expect(table.stdout).not.toContain(created.key);
    const none = await run(["service-key:list", "--subject", "nobody"]);
    expect(none.stdout).toBe('0 service keys of subject "nobody" (most recent first)\n');
  });

  it("revoke refuses a malformed id, an unknown id and a second revocation (exit 1)", async () => {
    const created = await createKey(["--subject", "svc-twice"]);
    expect((await run(["service-key:revoke", "--id", created.id.toUpperCase()])).exitCode).toBe(0);
    const cases: [string[], RegExp][] = [
      [[], /missing required flag --id/],
      [["--id", "not-a-uuid"], /--id must be a key id \(UUID, see service-key:list\), got "not-a-uuid"/],
      [["--id", "00000000-0000-4000-8000-000000000000"], /no api key "00000000-0000-4000-8000-000000000000"/],
      [["--id", created.id], /was already revoked at/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(["service-key:revoke", ...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect((JSON.parse(result.stderr) as { error: string }).error).toMatch(message);
      expect(result.stdout).toBe("");
    }
    const audit = await database.db.select().from(auditLog).where(eq(auditLog.target, created.id));
    expect(audit.map((entry) => entry.action)).toEqual(["service-key.create", "service-key.revoke"]);
  });

  it("appears in the usage with its flags", () => {
    const help = parseCommandLine(["help"]);
    expect(help.kind).toBe("help");
    if (help.kind !== "help") return;
    expect(help.text).toContain("service-key:create --subject S [--label L] [--expires-in-days N]");
    expect(help.text).toContain("service-key:list [--subject S]");
    expect(help.text).toContain("service-key:revoke --id ID");
  });
});
