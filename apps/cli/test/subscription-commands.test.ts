import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, researcherSubscriptions } from "@studyflow/db";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { runCommandLine } from "./run-command-line";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await createStudy(database.db, { key: "flu-watch" });
});
afterAll(async () => {
  await database.drop();
});

const run = (argv: string[]) => runCommandLine(database, argv);

/** Runs with --json and returns the parsed result, failing the test on any error. */
async function json<T = Record<string, any>>(argv: string[]): Promise<T> {
  const result = await run([...argv, "--json"]);
  expect(result.stderr, argv.join(" ")).toBe("");
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const stored = () =>
  database.db
    .select({ messageType: researcherSubscriptions.messageType, email: researcherSubscriptions.email })
    .from(researcherSubscriptions)
    .orderBy(researcherSubscriptions.id);

describe("subscription:add, subscription:list, subscription:remove", () => {
  it("subscribes addresses (normalised; again is no change), lists them, removes one by id: audited as operator-cli", async () => {
    const added = await json([
      "subscription:add",
      "--study",
      "flu-watch",
      "--type",
      "symptom-report",
      "--email",
      "Lena@Example.org",
    ]);
    expect(added).toMatchObject({
      studyKey: "flu-watch",
      created: true,
      subscription: { messageType: "symptom-report", email: "lena@example.org", createdBy: "operator-cli" },
    });
    const again = await json([
      "subscription:add",
      "--study",
      "flu-watch",
      "--type",
      "symptom-report",
      "--email",
      "lena@example.org",
    ]);
    expect(again).toMatchObject({ created: false, subscription: { id: added.subscription.id } });

    const human = await run(["subscription:add", "--study", "flu-watch", "--type", "*", "--email", "team@example.org"]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(
      /^team@example\.org subscribed to every notification of study "flu-watch"\nid {2}\d+\n$/,
    );

    const listed = await json<{ subscriptions: { messageType: string; email: string }[] }>([
      "subscription:list",
      "--study",
      "flu-watch",
    ]);
    expect(listed.subscriptions.map((s) => `${s.messageType} ${s.email}`)).toEqual([
      "* team@example.org",
      "symptom-report lena@example.org",
    ]);
    const table = await run(["subscription:list", "--study", "flu-watch"]);
    expect(table.stdout.split("\n").slice(0, 2)).toEqual([
      '2 subscriptions in study "flu-watch"',
      expect.stringMatching(/^id +type +email +added by +added at$/),
    ]);

    const removed = await run(["subscription:remove", "--study", "flu-watch", "--id", String(added.subscription.id)]);
    expect(removed.stdout).toBe(
      `subscription ${added.subscription.id} removed: lena@example.org no longer receives "symptom-report" notifications of study "flu-watch"\n`,
    );
    expect(await stored()).toEqual([{ messageType: "*", email: "team@example.org" }]);

    const audit = await database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.studyKey, "flu-watch"))
      .orderBy(auditLog.id);
    expect(audit.map((e) => `${e.actor} ${e.action} ${JSON.stringify(e.details)}`)).toEqual([
      'operator-cli subscription.add {"email":"lena@example.org","messageType":"symptom-report"}',
      'operator-cli subscription.add {"email":"team@example.org","messageType":"*"}',
      'operator-cli subscription.remove {"email":"lena@example.org","messageType":"symptom-report"}',
    ]);
  });

  it("refuses bad flags before connecting, and unknown studies or ids with exit code 1", async () => {
    const before = await stored();
    const cases: [string[], RegExp][] = [
      [
        ["subscription:add", "--study", "flu-watch", "--type", "x", "--email", "nobody"],
        /--email must be an e-mail address/,
      ],
      [
        ["subscription:add", "--study", "flu-watch", "--type", " x", "--email", "a@example.org"],
        /--type must not start or end with spaces/,
      ],
      [["subscription:add", "--study", "flu-watch", "--email", "a@example.org"], /--type/],
      [["subscription:add", "--study", "nope", "--type", "x", "--email", "a@example.org"], /^study "nope" not found$/],
      [["subscription:list", "--study", "nope"], /^study "nope" not found$/],
      [["subscription:remove", "--study", "flu-watch", "--id", "abc"], /--id must be a whole number/],
      [
        ["subscription:remove", "--study", "flu-watch", "--id", "999999"],
        /^subscription 999999 not found in study "flu-watch"$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await run([...argv, "--json"]);
      expect(result.exitCode, argv.join(" ")).toBe(1);
      expect((JSON.parse(result.stderr) as { error: string }).error, argv.join(" ")).toMatch(message);
      expect(result.stdout).toBe("");
    }
    expect(await stored()).toEqual(before);
  });
});
