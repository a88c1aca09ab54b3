import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountDeletions, outgoingMessages, users } from "@studyflow/db";
import { createUserWithProfiles } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { loadConfig } from "../src/config";
import { runWithSettings } from "./run-with-settings";

const DAY = 86_400;
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);

let database: TestDatabase;
const ids: Record<string, string> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  const make = async (name: string, values: Partial<typeof users.$inferInsert>) => {
    const made = await createUserWithProfiles(database.db, {
      now: new Date(),
      email: `${name}@example.org`,
      password: "Correct-Horse-Battery-9",
      profiles: ["main"],
    });
    await database.db.update(users).set(values).where(eq(users.id, made.user.id));
    ids[name] = made.user.id;
  };
  await make("stale", { createdAt: ago(10 * DAY) });
  await make("unconfirmed", { createdAt: ago(3 * DAY) });
  await make("idle", { createdAt: ago(800 * DAY), accountConfirmedAt: ago(800 * DAY), lastLoginAt: ago(400 * DAY) });
  await make("locked", { createdAt: ago(10 * DAY), lockedAt: ago(DAY) });
});
afterAll(async () => {
  await database.drop();
});

const ALL_ON = {
  ACCOUNT_UNVERIFIED_DELETE_AFTER_SECONDS: String(7 * DAY),
  ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS: String(2 * DAY),
  ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS: String(365 * DAY),
};

async function snapshot() {
  return {
    users: (await database.db.select().from(users)).length,
    mails: (await database.db.select().from(outgoingMessages)).length,
    deletions: (await database.db.select().from(accountDeletions)).length,
  };
}

describe("accounts:lifecycle --dry-run", () => {
  it("lists per enabled step the accounts the next round would handle, and changes nothing", async () => {
    const before = await snapshot();
    const result = await runWithSettings(database, ["accounts:lifecycle", "--dry-run", "--json"], ALL_ON);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const data = JSON.parse(result.stdout) as { steps: Record<string, { userId: string }[]>; off: string[] };
    const listed = Object.fromEntries(
      Object.entries(data.steps).map(([step, rows]) => [step, rows.map((row) => row.userId)]),
    );
    expect(listed).toEqual({
      "remove-unverified": [ids.stale],
      "remind-unverified": [ids.unconfirmed],
      "delete-inactive": [],
      "notify-inactive": [ids.idle],
    });
    expect(data.off).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it("prints plain lines naming the accounts by id, and the steps that are off", async () => {
    const result = await runWithSettings(database, ["accounts:lifecycle", "--dry-run"], {
      ACCOUNT_UNVERIFIED_REMINDER_AFTER_SECONDS: String(2 * DAY),
    });
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trim().split("\n");
    // Removal is off here, so the older unproven account is reminded too.
    expect(lines[0]).toBe("remind-unverified: would remind to confirm the address: 2 account(s)");
    expect(lines[1]).toContain(ids.stale);
    expect(lines[2]).toContain(ids.unconfirmed);
    expect(result.stdout).not.toContain("@example.org");
    expect(lines.at(-1)).toBe("off (not configured): remove-unverified, delete-inactive, notify-inactive");
  });

  it("lists nothing when no step is configured", async () => {
    const result = await runWithSettings(database, ["accounts:lifecycle", "--dry-run", "--json"], {});
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ steps: {}, off: expect.any(Array) as unknown[] });
  });

  it("refuses to run without --dry-run and a bad limit, changing nothing", async () => {
    const before = await snapshot();
    const without = await runWithSettings(database, ["accounts:lifecycle"], ALL_ON);
    expect(without.exitCode).toBe(1);
    expect(without.stderr).toContain("only lists (--dry-run)");
    const badLimit = await runWithSettings(database, ["accounts:lifecycle", "--dry-run", "--limit", "0"], ALL_ON);
    expect(badLimit.exitCode).toBe(1);
    expect(() => loadConfig({ ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS: "12" })).toThrow(
      /ACCOUNT_INACTIVE_NOTIFY_AFTER_SECONDS/,
    );
    expect(await snapshot()).toEqual(before);
  });
});
