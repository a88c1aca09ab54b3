import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "@studyflow/domain/foundation";
import { runAccountDeletion } from "@studyflow/domain/participant-accounts";
import { createUserWithProfiles } from "@studyflow/domain/study-setup";
import { createRedisConnection } from "@studyflow/queue";
import {
  createTestDatabase,
  deletePrefix,
  testRedisUrl,
  uniqueQueuePrefix,
  type TestDatabase,
} from "@studyflow/testkit";
import { createCapturedOutput, loadConfig } from "../src/index";
import { userDelete } from "../src/commands/user-delete";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;
const prefix = uniqueQueuePrefix();

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  const redis = createRedisConnection(testRedisUrl, "producer");
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await database.drop();
});

const newUser = (email: string) =>
  createUserWithProfiles(database.db, {
    now: new Date(),
    email,
    password: "Correct-Horse-Battery-9",
    profiles: ["main"],
  });

describe("user:find, user:lock, user:unlock, user:sign-out", () => {
  it("finds by e-mail and locks, unlocks, signs out by id", async () => {
    const { user } = await newUser("cli-user@example.org");
    const found = await runCommandLine(database, ["user:find", "--email", "CLI-user@example.org", "--json"]);
    expect(found.exitCode).toBe(0);
    const account = (JSON.parse(found.stdout) as { account: Record<string, unknown> }).account;
    expect(account).toMatchObject({ id: user.id, lockedAt: null, profileCount: 1, deletion: null });
    expect(found.stdout).not.toContain("argon2");

    const locked = await runCommandLine(database, ["user:lock", "--user", user.id, "--json"]);
    expect((JSON.parse(locked.stdout) as { account: { lockedAt: string | null } }).account.lockedAt).not.toBeNull();
    const unlocked = await runCommandLine(database, ["user:unlock", "--user", user.id]);
    expect(unlocked.stdout).toContain("account unlocked");
    const signedOut = await runCommandLine(database, ["user:sign-out", "--user", user.id, "--json"]);
    expect(JSON.parse(signedOut.stdout)).toEqual({ userId: user.id, sessionsEnded: 0 });

    const missing = await runCommandLine(database, ["user:find", "--email", "nobody@example.org"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("no participant account");
  });
});

describe("user:delete", () => {
  it("queues the deletion and follows it with progress lines until the account is gone", async () => {
    const { user } = await newUser("cli-delete@example.org");
    const config = loadConfig({ NODE_ENV: "test", DATABASE_URL: database.url, QUEUE_PREFIX: prefix });
    const { output, captured } = createCapturedOutput(false);
    let progress = "";
    const deleting = userDelete(
      {
        clock: systemClock,
        database,
        config,
        output,
        workingDirectory: process.cwd(),
        pollIntervalMs: 20,
        progress: { write: (text: string) => (progress += text), isTTY: false },
      },
      { userId: user.id, wait: true },
    );
    // the worker's part, as its processor runs it, once the command has queued the deletion
    let deletionId: string | undefined;
    await expect
      .poll(
        async () => {
          const [row] = await database.sql<
            { id: string }[]
          >`select id from account_deletions where user_id = ${user.id}`;
          deletionId = row?.id;
          return deletionId;
        },
        { timeout: 20_000, interval: 20 },
      )
      .toBeDefined();
    await runAccountDeletion(database.db, deletionId!, { clock: Date.now });
    const result = await deleting;
    expect(result.deletion.status).toBe("done");
    expect(captured.stdout).toContain(`account ${user.id} deleted`);
    expect(progress).toMatch(/participants/);
    const left = await database.sql`select id from users where id = ${user.id}`;
    expect(left).toHaveLength(0);
  });
});
