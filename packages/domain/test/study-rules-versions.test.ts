import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyRules } from "@studyflow/db";
import { loadCurrentRules } from "@studyflow/domain/rules";
import { deleteRulesVersion } from "@studyflow/domain/study-config";
import { createStudy, setStudyRules } from "@studyflow/domain/study-setup";
import { rulesVersionHandlesTimer } from "@studyflow/domain/timer";
import { call, createTestDatabase, onEvent, str, type TestDatabase } from "@studyflow/testkit";

const rulesSetting = (value: string) => [onEvent("CUSTOM", call("UPDATE_FLAG", str("v"), str(value)))];

describe("rules version numbers (storeRules)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "flu" });
    await createStudy(database.db, { key: "other" });
  });
  afterAll(async () => {
    await database.drop();
  });

  const versionsOf = async (studyKey: string) =>
    (
      await database.db
        .select({ version: studyRules.version })
        .from(studyRules)
        .where(eq(studyRules.studyKey, studyKey))
        .orderBy(asc(studyRules.version))
    ).map((row) => row.version);

  it("never gives a deleted highest version's number again: v1, v2, delete v2, upload → v3", async () => {
    expect(await setStudyRules(database.db, "flu", rulesSetting("1"), "alice")).toBe(1);
    expect(await setStudyRules(database.db, "flu", rulesSetting("2"), "alice")).toBe(2);
    expect(await deleteRulesVersion(database.db, { studyKey: "flu", version: 2, actor: "alice" })).toEqual({
      version: 2,
      currentVersion: 1,
    });
    expect((await loadCurrentRules(database.db, "flu"))?.version).toBe(1);
    expect(await setStudyRules(database.db, "flu", rulesSetting("3"), "bob")).toBe(3);
    expect(await versionsOf("flu")).toEqual([1, 3]);
    expect((await loadCurrentRules(database.db, "flu"))?.version).toBe(3);
    const audited = await database.db
      .select({ action: auditLog.action, target: auditLog.target })
      .from(auditLog)
      .where(eq(auditLog.studyKey, "flu"))
      .orderBy(asc(auditLog.id));
    expect(audited.filter((row) => row.action.startsWith("rules."))).toEqual([
      { action: "rules.set", target: "1" },
      { action: "rules.set", target: "2" },
      { action: "rules.delete", target: "2" },
      { action: "rules.set", target: "3" },
    ]);
  });

  it("not even once every version is gone; other studies count on their own", async () => {
    for (const version of await versionsOf("flu")) {
      await deleteRulesVersion(database.db, { studyKey: "flu", version, actor: "alice" });
    }
    expect(await versionsOf("flu")).toEqual([]);
    expect(await loadCurrentRules(database.db, "flu")).toBeNull();
    expect(await setStudyRules(database.db, "flu", rulesSetting("4"), "alice")).toBe(4);
    // A study that never had rules starts at 1, whatever another study did.
    expect(await setStudyRules(database.db, "other", rulesSetting("x"), "alice")).toBe(1);
  });

  it("concurrent uploads each get their own next number", async () => {
    const versions = await Promise.all(
      ["a", "b", "c", "d"].map((value) => setStudyRules(database.db, "flu", rulesSetting(value), "carol")),
    );
    expect([...versions].sort((a, b) => a - b)).toEqual([5, 6, 7, 8]);
  });
});

describe("compiled rules kept by the process (one per stored rules row)", () => {
  let first: TestDatabase;
  let second: TestDatabase;
  beforeAll(async () => {
    [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    for (const { db } of [first, second]) await createStudy(db, { key: "flu" });
  });
  afterAll(async () => {
    await Promise.all([first?.drop(), second?.drop()]);
  });

  const currentRulesJson = async (database: TestDatabase) =>
    JSON.stringify((await loadCurrentRules(database.db, "flu"))?.compiled.rules);

  it("two databases with the same study key and version each get their own rules", async () => {
    expect(await setStudyRules(first.db, "flu", rulesSetting("first"), "alice")).toBe(1);
    expect(
      await setStudyRules(second.db, "flu", [onEvent("TIMER", call("UPDATE_FLAG", str("v"), str("second")))], "bob"),
    ).toBe(1);
    expect(await currentRulesJson(first)).toContain('"first"');
    expect(await currentRulesJson(second)).toContain('"second"');
    expect(await currentRulesJson(first)).toContain('"first"');
    expect(await rulesVersionHandlesTimer(first.db, "flu", 1)).toBe(false);
    expect(await rulesVersionHandlesTimer(second.db, "flu", 1)).toBe(true);
    expect(await rulesVersionHandlesTimer(first.db, "flu", 1)).toBe(false);
  });

  it("a version number stored again by another row (a restored dump) is compiled afresh", async () => {
    expect(await currentRulesJson(first)).toContain('"first"');
    expect(await rulesVersionHandlesTimer(first.db, "flu", 1)).toBe(false);
    // What a restore of an older dump does under a running process: the same key and version, other rules.
    await first.db.delete(studyRules).where(eq(studyRules.studyKey, "flu"));
    await first.db.insert(studyRules).values({
      studyKey: "flu",
      version: 1,
      rules: [onEvent("TIMER", call("UPDATE_FLAG", str("v"), str("restored")))],
      uploadedBy: "restore",
    });
    expect(await currentRulesJson(first)).toContain('"restored"');
    expect(await rulesVersionHandlesTimer(first.db, "flu", 1)).toBe(true);
  });
});
