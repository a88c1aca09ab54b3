import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DrizzleQueryError, and, asc, count, eq, sql } from "drizzle-orm";
import { jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  auditLog,
  createDb,
  outgoingMessages,
  participants,
  passwordResetTokens,
  permissions,
  profiles,
  studies,
  studyRules,
  tokenRevocations,
  users,
} from "@studyflow/db";
import { hmacKey } from "@studyflow/domain/access";
import { systemClock } from "@studyflow/domain/foundation";
import { verifyPassword } from "@studyflow/domain/participant-accounts";
import {
  call,
  createEmptyDatabase,
  createTestDatabase,
  exp,
  num,
  onEvent,
  str,
  STRONG_PASSWORD,
  type TestDatabase,
} from "@studyflow/testkit";
import {
  describeFailure,
  parseCommandLine,
  studyCreate,
  tokenManagement,
  usage,
  type CliContext,
  type Failure,
  type participantsAdd,
  type passwordResetToken,
  type tokenParticipant,
  type tokenRevoke,
  type userCreate,
} from "../src/index";
import { createCapturedOutput } from "../src/output";
import { loadConfig, type CliConfig } from "../src/config";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const execFileAsync = promisify(execFile);

/** What the CLI itself wrote to stderr: npx may add its own "npm warn …" lines about the machine's npm config. */
const ownStderr = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => !line.startsWith("npm warn"))
    .join("\n");

let database: TestDatabase;
let config: CliConfig;
let rulesDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  config = loadConfig({ NODE_ENV: "test", DATABASE_URL: database.url, LOG_LEVEL: "silent" });
  rulesDir = await mkdtemp(join(tmpdir(), "studyflow-cli-"));
});

afterAll(async () => {
  await database.drop();
  await rm(rulesDir, { recursive: true, force: true });
});

function contextWith(json: boolean, overrides: Partial<CliContext> = {}) {
  const { output, captured } = createCapturedOutput(json);
  const ctx: CliContext = { database, config, output, workingDirectory: rulesDir, clock: systemClock, ...overrides };
  return { ctx, captured };
}

/** A command's result as it arrives through JSON: dates become ISO strings. */
type Jsonified<T> = T extends Date ? string : T extends object ? { [K in keyof T]: Jsonified<T[K]> } : T;
type AnyCommand = (...args: never[]) => Promise<unknown>;

/**
 * Runs a command line as the entry does (parse, run), with --json, and returns the parsed stdout
 * object, typed as the result of the command function named by the type argument.
 */
async function cli<F extends AnyCommand = AnyCommand>(argv: string[]): Promise<Jsonified<Awaited<ReturnType<F>>>> {
  const commandLine = parseCommandLine([...argv, "--json"]);
  if (commandLine.kind !== "run") throw new Error(`not a command: ${argv.join(" ")}`);
  const { ctx, captured } = contextWith(commandLine.json);
  await commandLine.run(ctx);
  expect(captured.stderr).toBe("");
  // Exactly one JSON object on one line.
  expect(captured.stdout.trimEnd().split("\n")).toHaveLength(1);
  return JSON.parse(captured.stdout) as Jsonified<Awaited<ReturnType<F>>>;
}

/** Runs a command line that must fail, and returns the exit code and message the entry would show. */
async function cliFailure(argv: string[], overrides: Partial<CliContext> = {}): Promise<Failure & { stdout: string }> {
  let stdout = "";
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind !== "run") throw new Error("help does not fail");
    const { ctx, captured } = contextWith(commandLine.json, overrides);
    await commandLine.run(ctx);
    stdout = captured.stdout;
  } catch (error) {
    return { ...describeFailure(error), stdout };
  }
  throw new Error(`expected "${argv.join(" ")}" to fail, but it printed: ${stdout}`);
}

let fileCounter = 0;
async function rulesFile(content: unknown): Promise<string> {
  fileCounter += 1;
  const name = `rules-${fileCounter}.json`;
  await writeFile(join(rulesDir, name), typeof content === "string" ? content : JSON.stringify(content));
  return name;
}

const INTAKE_RULES = [
  onEvent(
    "ENTER",
    call("ADD_NEW_SURVEY", str("intake"), exp(call("timestampWithOffset", num(0))), num(0), str("normal")),
  ),
  onEvent("SUBMIT", call("UPDATE_FLAG", str("intakeDone"), str("yes"))),
];

async function studyRow(key: string) {
  const [row] = await database.db.select().from(studies).where(eq(studies.key, key));
  return row;
}

async function ruleVersions(key: string) {
  const rows = await database.db
    .select({ version: studyRules.version, uploadedBy: studyRules.uploadedBy })
    .from(studyRules)
    .where(eq(studyRules.studyKey, key))
    .orderBy(asc(studyRules.version));
  return rows;
}

describe("usage and entry", () => {
  it("lists every command and every flag in the usage", () => {
    const help = parseCommandLine([]);
    expect(help.kind).toBe("help");
    const text = help.kind === "help" ? help.text : "";
    expect(parseCommandLine(["--help"])).toEqual(help);
    expect(parseCommandLine(["help"])).toEqual(help);
    for (const command of [
      "migrate",
      "study:create",
      "study:set-rules",
      "participants:add",
      "user:create",
      "permission:grant",
      "token:management",
      "token:participant",
      "password-reset:token",
    ]) {
      expect(text).toContain(`  ${command}`);
    }
    for (const flag of [
      "--key",
      "--status",
      "--secret",
      "--track-account",
      "--rules",
      "--study",
      "--count",
      "--statuses",
      "--prefix",
      "--email",
      "--password",
      "--profiles",
      "--language",
      "--subject",
      "--action",
      "--admin",
      "--ttl",
      "--user",
      "--json",
    ]) {
      expect(text).toContain(flag);
    }
  });

  it("shows one command's usage for `<command> --help` and `help <command>`", () => {
    const one = parseCommandLine(["token:participant", "--help"]);
    expect(one.kind).toBe("help");
    const text = one.kind === "help" ? one.text : "";
    expect(text.length).toBeLessThan(usage().length);
    expect(text).toContain("token:participant --user USER_ID");
    expect(text).not.toContain("study:create");
    expect(parseCommandLine(["help", "token:participant"])).toEqual(one);
  });

  it("prints the usage with exit code 0 when run as a process", async () => {
    const { stdout, stderr } = await execFileAsync("npx", ["tsx", "apps/cli/src/main.ts", "help"], {
      cwd: repoRoot,
    });
    expect(ownStderr(stderr)).toBe("");
    expect(stdout).toContain("usage: npm run cli -- <command> [flags]");
    expect(stdout).toContain("study:create --key KEY");
    expect(stdout).toContain("password-reset:token --email E");
  });

  it("exits 1 with one line on stderr for an unknown command", async () => {
    const failure = await execFileAsync("npx", ["tsx", "apps/cli/src/main.ts", "frobnicate", "--json"], {
      cwd: repoRoot,
    }).then(
      () => null,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failure).not.toBeNull();
    expect(failure!.code).toBe(1);
    expect(failure!.stdout).toBe("");
    expect(ownStderr(failure!.stderr!)).toBe(
      `{"error":"unknown command \\"frobnicate\\" (run \\"help\\" for the list)"}\n`,
    );
  });
});

describe("argument errors name the flag", () => {
  it.each([
    [["study:create"], "study:create: missing required flag --key"],
    [["study:set-rules", "--key", "s"], "study:set-rules: missing required flag --rules"],
    [["participants:add"], "participants:add: missing required flags --study, --count"],
    [["study:create", "--key", "s", "--colour", "red"], "study:create: unknown flag --colour (see: help study:create)"],
    [["study:create", "--key"], "study:create: flag --key needs a value"],
    [["study:create", "--key", "--json"], "study:create: flag --key needs a value"],
    [["study:create", "--key", "s", "--track-account=yes"], "study:create: flag --track-account takes no value"],
    [["study:create", "--key", "s", "extra"], 'study:create: unexpected argument "extra"'],
    [
      ["study:create", "--key", "a/b"],
      "study:create: --key must be at most 200 characters, without spaces, '/', '?' or '#'",
    ],
    [
      ["study:create", "--key", "s", "--status", "paused"],
      'study:create: --status must be one of active, inactive; got "paused"',
    ],
    [
      ["participants:add", "--study", "s", "--count", "ten"],
      'participants:add: --count must be a whole number from 1 to 10000000, got "ten"',
    ],
    [
      ["participants:add", "--study", "s", "--count", "0"],
      'participants:add: --count must be a whole number from 1 to 10000000, got "0"',
    ],
    [
      ["participants:add", "--study", "s", "--count", "1.5"],
      'participants:add: --count must be a whole number from 1 to 10000000, got "1.5"',
    ],
    [
      ["participants:add", "--study", "s", "--count", "5", "--statuses", "active,,exited"],
      "participants:add: --statuses is a comma-separated list without empty items",
    ],
    [
      ["token:management", "--subject", "x", "--ttl", "10"],
      'token:management: --ttl must be a whole number from 60 to 31622400, got "10"',
    ],
    [["token:participant", "--user", "42"], 'token:participant: --user must be a user id (UUID), got "42"'],
    [
      ["user:create", "--email", "nobody", "--password", STRONG_PASSWORD],
      "user:create: --email must be an e-mail address",
    ],
    [
      ["user:create", "--email", "a@example.org", "--password", STRONG_PASSWORD, "--language", "english!"],
      "user:create: --language must be a language tag such as en or de-CH",
    ],
    [
      ["permission:grant", "--subject", "r", "--study", "s", "--action", "delete-everything"],
      "permission:grant: --action must be one of edit-participant-data, run-study-action, update-study-props, " +
        "read-rule-failures, manage-surveys, manage-code-lists, manage-study-variables, manage-rules, " +
        "read-audit-log, manage-timer, manage-message-templates, manage-subscriptions, read-study-config, " +
        "get-responses, delete-responses, get-participant-states, get-reports, get-confidential-responses, " +
        "create-study, update-study-status, update-notification-subscriptions, update-study-rules, delete-study, " +
        "manage-study-code-lists, manage-study-counters, manage-study-permissions, create-survey, update-survey, " +
        "unpublish-survey, delete-survey-version, get-files, delete-files, create-virtual-participant, " +
        "merge-participants, delete-reports, delete-users, *; " +
        'got "delete-everything"',
    ],
    [["frobnicate"], 'unknown command "frobnicate" (run "help" for the list)'],
  ])("%j", async (argv, message) => {
    const failure = await cliFailure(argv);
    expect(failure).toEqual({ exitCode: 1, message, stdout: "" });
  });
});

describe("migrate", () => {
  it("applies the migrations to an empty database", async () => {
    const empty = await createEmptyDatabase();
    try {
      const { ctx, captured } = contextWith(true, { config: { ...config, DATABASE_URL: empty.url } });
      const commandLine = parseCommandLine(["migrate", "--json"]);
      if (commandLine.kind !== "run") throw new Error("unreachable");
      await commandLine.run(ctx);
      expect(JSON.parse(captured.stdout)).toEqual({ migrated: true });
      const check = createDb(empty.url, { max: 1 });
      try {
        const rows = await check.sql<{ name: string | null }[]>`select to_regclass('public.studies')::text as name`;
        expect(rows[0]?.name).toBe("studies");
      } finally {
        await check.close(1);
      }
    } finally {
      await empty.drop();
    }
  });
});

describe("study:create", () => {
  it("creates a study with its first rules version", async () => {
    const file = await rulesFile(INTAKE_RULES);
    const result = await cli<typeof studyCreate>([
      "study:create",
      "--key",
      "cohort-a",
      "--status",
      "inactive",
      "--secret",
      "a-study-secret-of-some-length",
      "--track-account",
      "--rules",
      file,
    ]);
    expect(result).toEqual({
      study: { key: "cohort-a", status: "inactive", trackAccount: true, createdAt: expect.any(String) },
      rulesVersion: 1,
    });
    const row = await studyRow("cohort-a");
    expect(row).toMatchObject({ status: "inactive", trackAccount: true, secret: "a-study-secret-of-some-length" });
    expect(await ruleVersions("cohort-a")).toEqual([{ version: 1, uploadedBy: "operator-cli" }]);
    // both audited, in the order made; the secret is in neither record
    const audited = await database.db
      .select({ actor: auditLog.actor, action: auditLog.action, details: auditLog.details })
      .from(auditLog)
      .where(eq(auditLog.studyKey, "cohort-a"))
      .orderBy(asc(auditLog.id));
    expect(audited.map((entry) => [entry.actor, entry.action])).toEqual([
      ["operator-cli", "study.create"],
      ["operator-cli", "rules.set"],
    ]);
    expect(JSON.stringify(audited)).not.toContain("a-study-secret");
    // The secret never leaves the server, not even to the operator's terminal.
    expect(JSON.stringify(result)).not.toContain("a-study-secret");
  });

  it("creates an active study without rules by default, with a generated secret", async () => {
    const result = await cli<typeof studyCreate>(["study:create", "--key", "cohort-b"]);
    expect(result).toMatchObject({
      study: { key: "cohort-b", status: "active", trackAccount: false },
      rulesVersion: null,
    });
    const row = await studyRow("cohort-b");
    expect(row?.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(await ruleVersions("cohort-b")).toEqual([]);
  });

  it("refuses an invalid rules file with the validator's JSON paths and creates no study", async () => {
    const file = await rulesFile([
      onEvent("ENTER", call("ADD_NEW_SURVEY", str("intake"))),
      call("NO_SUCH_ACTION", str("x")),
    ]);
    const failure = await cliFailure(["study:create", "--key", "cohort-invalid", "--rules", file]);
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toMatch(new RegExp(`^invalid rules in ${file}: `));
    expect(failure.message).toContain("rules[0].data[1].exp");
    expect(failure.message).toContain('rules[1].name: unknown action "NO_SUCH_ACTION"');
    expect(await studyRow("cohort-invalid")).toBeUndefined();
  });

  it("refuses unreadable and non-JSON rules files and creates no study", async () => {
    const notJson = await rulesFile("[{ name: IFTHEN ");
    const broken = await cliFailure(["study:create", "--key", "cohort-broken", "--rules", notJson]);
    expect(broken.exitCode).toBe(1);
    expect(broken.message).toMatch(new RegExp(`^rules file ${notJson} is not valid JSON: `));

    const missing = await cliFailure(["study:create", "--key", "cohort-broken", "--rules", "nope.json"]);
    expect(missing).toMatchObject({ exitCode: 1, message: "cannot read rules file nope.json: no such file" });

    const notArray = await rulesFile({ rules: INTAKE_RULES });
    const wrapped = await cliFailure(["study:create", "--key", "cohort-broken", "--rules", notArray]);
    expect(wrapped.exitCode).toBe(1);
    expect(wrapped.message).toContain(`invalid rules in ${notArray}: rules`);

    expect(await studyRow("cohort-broken")).toBeUndefined();
  });

  it("refuses a duplicate key and a short secret as input errors", async () => {
    await cli(["study:create", "--key", "cohort-dup"]);
    expect(await cliFailure(["study:create", "--key", "cohort-dup"])).toMatchObject({
      exitCode: 1,
      message: 'study "cohort-dup" already exists',
    });
    expect(await cliFailure(["study:create", "--key", "cohort-short", "--secret", "short"])).toMatchObject({
      exitCode: 1,
      message: "study secret must be at least 16 characters",
    });
    expect(await studyRow("cohort-short")).toBeUndefined();
  });

  it("prints people-readable lines without --json", async () => {
    const { ctx, captured } = contextWith(false);
    const data = await studyCreate(ctx, { key: "cohort-text" });
    expect(data.rulesVersion).toBeNull();
    expect(captured.stdout).toContain('study "cohort-text" created\n');
    expect(captured.stdout).toMatch(/^status +active$/m);
    expect(captured.stdout).not.toContain("{");
  });
});

describe("study:set-rules", () => {
  it("stores each upload as the next version", async () => {
    await cli(["study:create", "--key", "rules-study"]);
    const file = await rulesFile(INTAKE_RULES);
    expect(await cli(["study:set-rules", "--key", "rules-study", "--rules", file])).toEqual({
      studyKey: "rules-study",
      version: 1,
      ruleCount: 2,
    });
    expect(await cli(["study:set-rules", "--key", "rules-study", "--rules", file])).toMatchObject({ version: 2 });
    expect(await cli(["study:set-rules", "--key", "rules-study", "--rules", join(rulesDir, file)])).toMatchObject({
      version: 3,
    });
    expect((await ruleVersions("rules-study")).map((row) => row.version)).toEqual([1, 2, 3]);
  });

  it("stores nothing for invalid rules or an unknown study", async () => {
    await cli(["study:create", "--key", "rules-study-2"]);
    const bad = await rulesFile([call("UPDATE_FLAG", str("only-key"))]);
    const failure = await cliFailure(["study:set-rules", "--key", "rules-study-2", "--rules", bad]);
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toContain(`invalid rules in ${bad}: rules[0]`);
    expect(await ruleVersions("rules-study-2")).toEqual([]);

    const good = await rulesFile(INTAKE_RULES);
    expect(await cliFailure(["study:set-rules", "--key", "no-such-study", "--rules", good])).toMatchObject({
      exitCode: 1,
      message: 'no study "no-such-study"',
    });
  });
});

describe("participants:add", () => {
  it("adds a cohort with round-robin statuses", async () => {
    await cli(["study:create", "--key", "big-study"]);
    const before = Math.floor(Date.now() / 1000);
    const result = await cli<typeof participantsAdd>([
      "participants:add",
      "--study",
      "big-study",
      "--count",
      "1000",
      "--statuses",
      "active,exited",
      "--prefix",
      "demo-",
    ]);
    expect(result).toEqual({
      studyKey: "big-study",
      added: 1000,
      statuses: ["active", "exited"],
      enteredAt: expect.any(Number),
      firstParticipantId: "demo-000000000",
      lastParticipantId: "demo-000000999",
    });
    expect(result.enteredAt).toBeGreaterThanOrEqual(before);
    const byStatus = await database.db
      .select({ status: participants.studyStatus, n: count() })
      .from(participants)
      .where(eq(participants.studyKey, "big-study"))
      .groupBy(participants.studyStatus)
      .orderBy(asc(participants.studyStatus));
    expect(byStatus).toEqual([
      { status: "active", n: 500 },
      { status: "exited", n: 500 },
    ]);
    const [last] = await database.db
      .select()
      .from(participants)
      .where(and(eq(participants.studyKey, "big-study"), eq(participants.participantId, "demo-000000999")));
    expect(last).toMatchObject({ studyStatus: "exited", enteredAt: result.enteredAt });
  });

  it("refuses clashing ids without adding any, and an unknown study", async () => {
    await cli(["study:create", "--key", "clash-study"]);
    await cli(["participants:add", "--study", "clash-study", "--count", "10"]);
    const failure = await cliFailure(["participants:add", "--study", "clash-study", "--count", "20"]);
    expect(failure).toMatchObject({
      exitCode: 1,
      message: 'participant ids starting with "p" already exist in study "clash-study"; choose another --prefix',
    });
    const [total] = await database.db
      .select({ n: count() })
      .from(participants)
      .where(eq(participants.studyKey, "clash-study"));
    expect(total?.n).toBe(10);

    expect(await cliFailure(["participants:add", "--study", "ghost", "--count", "1"])).toMatchObject({
      exitCode: 1,
      message: 'no study "ghost"',
    });
  });
});

describe("user:create", () => {
  it("creates a user with profiles, the first being the main one", async () => {
    const result = await cli<typeof userCreate>([
      "user:create",
      "--email",
      "Alice@Example.org",
      "--password",
      STRONG_PASSWORD,
      "--profiles",
      "main,child",
      "--language",
      "de",
    ]);
    expect(result).toEqual({
      user: { id: expect.any(String), email: "alice@example.org", preferredLanguage: "de", tokenVersion: 0 },
      profiles: [
        { id: expect.any(String), alias: "main", mainProfile: true },
        { id: expect.any(String), alias: "child", mainProfile: false },
      ],
    });
    const [user] = await database.db.select().from(users).where(eq(users.id, result.user.id));
    expect(user?.email).toBe("alice@example.org");
    expect(await verifyPassword(user!.passwordHash, STRONG_PASSWORD)).toBe(true);
    const stored = await database.db
      .select({ id: profiles.id, alias: profiles.alias, mainProfile: profiles.mainProfile })
      .from(profiles)
      .where(eq(profiles.userId, result.user.id));
    expect(stored).toHaveLength(2);
    expect(stored).toEqual(expect.arrayContaining(result.profiles));
  });

  it("refuses a weak password and a taken e-mail", async () => {
    const weak = await cliFailure(["user:create", "--email", "weak@example.org", "--password", "password"]);
    expect(weak.exitCode).toBe(1);
    expect(weak.message).toMatch(/^--password: /);
    const [none] = await database.db.select({ n: count() }).from(users).where(eq(users.email, "weak@example.org"));
    expect(none?.n).toBe(0);

    await cli(["user:create", "--email", "taken@example.org", "--password", STRONG_PASSWORD]);
    expect(
      await cliFailure(["user:create", "--email", "TAKEN@example.org", "--password", STRONG_PASSWORD]),
    ).toMatchObject({
      exitCode: 1,
      message: "an account with e-mail TAKEN@example.org already exists",
    });
  });
});

describe("permission:grant", () => {
  it("grants a right on one study and on every study", async () => {
    await cli(["study:create", "--key", "perm-study"]);
    expect(
      await cli([
        "permission:grant",
        "--subject",
        "researcher-1",
        "--study",
        "perm-study",
        "--action",
        "run-study-action",
      ]),
    ).toMatchObject({
      granted: {
        subjectType: "management-user",
        subjectId: "researcher-1",
        resourceType: "study",
        resourceKey: "perm-study",
        action: "run-study-action",
      },
      alreadyHeld: false,
    });
    await cli(["permission:grant", "--subject", "operator-1", "--study", "*", "--action", "*"]);
    // Granting twice is harmless.
    expect(await cli(["permission:grant", "--subject", "operator-1", "--study", "*", "--action", "*"])).toMatchObject({
      alreadyHeld: true,
    });
    const rows = await database.db
      .select({ subject: permissions.subjectId, study: permissions.studyKey, action: permissions.action })
      .from(permissions)
      .where(sql`${permissions.subjectId} in ('researcher-1', 'operator-1')`)
      .orderBy(asc(permissions.subjectId));
    expect(rows).toEqual([
      { subject: "operator-1", study: "*", action: "*" },
      { subject: "researcher-1", study: "perm-study", action: "run-study-action" },
    ]);
  });

  it("refuses a bad action and an unknown study", async () => {
    const bad = await cliFailure(["permission:grant", "--subject", "r", "--study", "perm-study", "--action", "admin"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.message).toContain("--action must be one of");
    expect(
      await cliFailure(["permission:grant", "--subject", "r", "--study", "ghost", "--action", "run-study-action"]),
    ).toMatchObject({ exitCode: 1, message: 'no study "ghost"' });
    const [none] = await database.db.select({ n: count() }).from(permissions).where(eq(permissions.subjectId, "r"));
    expect(none?.n).toBe(0);
  });
});

describe("token commands", () => {
  it("mints management tokens that verify with the management secret", async () => {
    const admin = await cli<typeof tokenManagement>([
      "token:management",
      "--subject",
      "ops",
      "--admin",
      "--ttl",
      "600",
    ]);
    const { payload, protectedHeader } = await jwtVerify(admin.token, hmacKey(config.MANAGEMENT_JWT_SECRET), {
      issuer: "studyflow",
      algorithms: ["HS256"],
    });
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload).toMatchObject({ sub: "ops", typ: "management", admin: true });
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(admin).toMatchObject({
      subject: "ops",
      admin: true,
      expiresAt: new Date(payload.exp! * 1000).toISOString(),
    });

    const researcher = await cli<typeof tokenManagement>(["token:management", "--subject", "researcher-1"]);
    const verified = await jwtVerify(researcher.token, hmacKey(config.MANAGEMENT_JWT_SECRET));
    expect(verified.payload).toMatchObject({ sub: "researcher-1", typ: "management", admin: false });
    expect(verified.payload.exp! - verified.payload.iat!).toBe(3600);
    // Signed with the management key only: the participant key must not accept it.
    await expect(jwtVerify(researcher.token, hmacKey(config.PARTICIPANT_JWT_SECRET))).rejects.toThrow();
  });

  it("mints participant tokens carrying the user's current token version", async () => {
    const created = await cli<typeof userCreate>([
      "user:create",
      "--email",
      "tokens@example.org",
      "--password",
      STRONG_PASSWORD,
    ]);
    const first = await cli<typeof tokenParticipant>(["token:participant", "--user", created.user.id]);
    const { payload } = await jwtVerify(first.token, hmacKey(config.PARTICIPANT_JWT_SECRET), { issuer: "studyflow" });
    expect(payload).toMatchObject({ sub: created.user.id, typ: "participant", tv: 0 });
    expect(first).toMatchObject({ userId: created.user.id, tokenVersion: 0 });

    // A password reset bumps the version; new tokens must carry the new one.
    await database.db.update(users).set({ tokenVersion: 3 }).where(eq(users.id, created.user.id));
    const second = await cli<typeof tokenParticipant>([
      "token:participant",
      "--user",
      created.user.id.toUpperCase(),
      "--ttl",
      "120",
    ]);
    const verified = await jwtVerify(second.token, hmacKey(config.PARTICIPANT_JWT_SECRET));
    expect(verified.payload).toMatchObject({ sub: created.user.id, typ: "participant", tv: 3 });
    expect(verified.payload.exp! - verified.payload.iat!).toBe(120);
  });

  it("refuses a participant token for an unknown user", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect(await cliFailure(["token:participant", "--user", unknown])).toEqual({
      exitCode: 1,
      message: `no user with id ${unknown}`,
      stdout: "",
    });
  });

  it("prints the bare token on the first line without --json, for $(...) capture", async () => {
    const { ctx, captured } = contextWith(false);
    const data = await tokenManagement(ctx, { subject: "ops" });
    expect(captured.stdout.split("\n")[0]).toBe(data.token);
  });
});

describe("token:revoke", () => {
  it("records the revocation of a subject's tokens up to the current second", async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const data = await cli<typeof tokenRevoke>(["token:revoke", "--subject", "departed-researcher"]);
    const [row] = await database.db
      .select()
      .from(tokenRevocations)
      .where(eq(tokenRevocations.subjectId, "departed-researcher"));
    expect(row?.revokedBefore.toISOString()).toBe(data.revokedBefore);
    expect(row!.revokedBefore.getTime()).toBeGreaterThanOrEqual(before);
    expect(row!.revokedBefore.getTime() % 1000).toBe(0);
    expect(await cliFailure(["token:revoke"])).toMatchObject({ exitCode: 1 });
  });
});

describe("password-reset:token", () => {
  it("issues a stored reset token and queues the e-mail", async () => {
    const created = await cli<typeof userCreate>([
      "user:create",
      "--email",
      "forgetful@example.org",
      "--password",
      STRONG_PASSWORD,
    ]);
    const result = await cli<typeof passwordResetToken>(["password-reset:token", "--email", " Forgetful@Example.org "]);
    expect(result.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const link = new URL(result.resetUrl);
    expect(`${link.origin}${link.pathname}`).toBe(config.RESET_PASSWORD_URL);
    expect(link.searchParams.get("token")).toBe(result.token);

    const [stored] = await database.db
      .select()
      .from(passwordResetTokens)
      .where(eq(passwordResetTokens.userId, created.user.id));
    expect(stored?.tokenHash).toBe(createHash("sha256").update(result.token).digest("hex"));
    expect(stored?.expiresAt.toISOString()).toBe(result.expiresAt);
    expect(stored!.expiresAt.getTime() - Date.now()).toBeGreaterThan((config.RESET_TOKEN_TTL_SECONDS - 60) * 1000);

    const queued = await database.db
      .select({ template: outgoingMessages.template })
      .from(outgoingMessages)
      .where(eq(outgoingMessages.userId, created.user.id));
    expect(queued).toEqual([{ template: "password-reset" }]);
  });

  it("says so for an unknown e-mail", async () => {
    expect(await cliFailure(["password-reset:token", "--email", "nobody@example.org"])).toEqual({
      exitCode: 1,
      message: "no account with that e-mail",
      stdout: "",
    });
  });
});

describe("failures that are not the operator's", () => {
  it("exit 2 with the driver's reason when the database is unreachable", async () => {
    const unreachable = createDb("postgres://postgres@127.0.0.1:1/none", { max: 1 });
    try {
      const failure = await cliFailure(["study:create", "--key", "offline"], { database: unreachable });
      expect(failure.exitCode).toBe(2);
      expect(failure.message).toMatch(/ECONNREFUSED/);
      expect(failure.message).not.toContain("\n");
    } finally {
      await unreachable.close(1);
    }
  });

  it("never shows a failed query's parameters (they can hold password hashes)", () => {
    const error = new DrizzleQueryError(
      "insert into users (email, password_hash) values ($1, $2)",
      ["a@example.org", "$argon2id$v=19$secret-hash"],
      new Error("could not extend file"),
    );
    expect(describeFailure(error)).toEqual({ exitCode: 2, message: "database error: could not extend file" });
    expect(describeFailure(new Error("socket hang up"))).toEqual({ exitCode: 2, message: "socket hang up" });
  });
});
