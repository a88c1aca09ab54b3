import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, studyCodeLists, studyVariables } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";
import {
  addStudyCodes,
  decodePageCursor,
  encodePageCursor,
  parseStudyVariableText,
  setStudyVariable,
  studyVariableValue,
  updateStudy,
} from "@studyflow/domain/study-config";
import { createStudy, updateStudySettings } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

describe("study variable values", () => {
  it("keeps what fits the type, in the form the engine reads (dates as Unix seconds)", () => {
    expect(studyVariableValue("int", 250)).toBe(250);
    expect(studyVariableValue("int", -0)).toBe(0);
    expect(studyVariableValue("float", 0.85)).toBe(0.85);
    expect(studyVariableValue("boolean", false)).toBe(false);
    expect(studyVariableValue("string", "")).toBe("");
    expect(studyVariableValue("date", 1_793_491_200)).toBe(1_793_491_200);
    expect(studyVariableValue("date", "2026-11-01")).toBe(1_793_491_200);
    expect(studyVariableValue("date", "2026-11-01T01:00:00+01:00")).toBe(1_793_491_200);
    expect(studyVariableValue("date", "2026-11-01T00:00:00.999Z")).toBe(1_793_491_200);
  });

  it("refuses what does not, naming the field", () => {
    for (const [type, value] of [
      ["int", 1.5],
      ["int", Number.MAX_SAFE_INTEGER + 1],
      ["int", "1"],
      ["float", Number.NaN],
      ["float", Number.POSITIVE_INFINITY],
      ["boolean", 1],
      ["string", 1],
      ["date", 1.5],
      ["date", "2026-11-01T00:00:00"],
      ["date", "2026-13-01"],
      ["date", "tomorrow"],
    ] as const) {
      expect(() => studyVariableValue(type, value), `${type} ${String(value)}`).toThrow(/^value: /);
    }
  });

  it("reads command-line text as the type reads it", () => {
    expect(parseStudyVariableText("int", " 42 ")).toBe(42);
    expect(parseStudyVariableText("int", "-7")).toBe(-7);
    expect(parseStudyVariableText("float", "1e3")).toBe(1000);
    expect(parseStudyVariableText("float", ".5")).toBe(0.5);
    expect(parseStudyVariableText("boolean", "false")).toBe(false);
    expect(parseStudyVariableText("string", " as typed ")).toBe(" as typed ");
    expect(parseStudyVariableText("date", "1793491200")).toBe(1_793_491_200);
    expect(parseStudyVariableText("date", "2026-11-01")).toBe(1_793_491_200);
    expect(() => parseStudyVariableText("int", "0x10", "--value")).toThrow(/^--value: an int variable/);
    expect(() => parseStudyVariableText("boolean", "yes")).toThrow(/takes true or false, got "yes"/);
    expect(() => parseStudyVariableText("float", "Infinity")).toThrow(/finite number/);
  });
});

describe("page cursors", () => {
  it("round-trip any text and refuse what this service did not give out", () => {
    const cursor = encodePageCursor(["KIT 1/2|?#", 7]);
    expect(decodePageCursor(cursor, ["string", "number"])).toEqual(["KIT 1/2|?#", 7]);
    for (const bad of [
      "",
      "abc",
      encodePageCursor(["a"]),
      encodePageCursor([1, 2]),
      encodePageCursor(["a\u0000", 1]),
    ]) {
      expect(() => decodePageCursor(bad, ["string", "number"]), bad).toThrow(/cursor is not one this service gave out/);
    }
  });
});

describe("study configuration changes and their audit entries", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: "flu-watch" });
  });
  afterAll(async () => {
    await database.drop();
  });

  const audited = async (action: string) =>
    database.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(auditLog.id);

  it("defines a variable once when requests race, the others setting it", async () => {
    const results = await Promise.all(
      [10, 20, 30, 40, 50].map((value) =>
        setStudyVariable(database.db, "flu-watch", "kitStock", { type: "int", value }, `researcher-${value}`, {
          clock: systemClock,
        }),
      ),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await audited("variable.define")).toHaveLength(1);
    expect(await audited("variable.set")).toHaveLength(4);
  });

  it("adds overlapping code batches from racing requests without an error, each code once", async () => {
    const batches = [
      ["KIT-1", "KIT-2", "KIT-3"],
      ["KIT-2", "KIT-3", "KIT-4"],
      ["KIT-3", "KIT-4", "KIT-5"],
    ];
    const results = await Promise.all(
      batches.map((codes) => addStudyCodes(database.db, "flu-watch", "kit-codes", codes, "importer")),
    );
    expect(results.reduce((sum, result) => sum + result.added, 0)).toBe(5);
    const rows = await database.db.select().from(studyCodeLists).where(eq(studyCodeLists.listKey, "kit-codes"));
    expect(rows.map((row) => row.code).sort()).toEqual(["KIT-1", "KIT-2", "KIT-3", "KIT-4", "KIT-5"]);
  });

  it("keeps no change whose audit entry cannot be written: both commit or neither", async () => {
    // PostgreSQL stores no NUL in text, so this actor's audit entry fails after the change itself
    const unwritable = "operator\u0000";
    await expect(
      setStudyVariable(database.db, "flu-watch", "recruiting", { type: "boolean", value: true }, unwritable, {
        clock: systemClock,
      }),
    ).rejects.toThrow();
    await expect(addStudyCodes(database.db, "flu-watch", "welcome", ["W-1"], unwritable)).rejects.toThrow();
    await expect(
      updateStudy(database.db, "flu-watch", { status: "inactive" }, unwritable, { clock: systemClock }),
    ).rejects.toThrow();
    expect(await database.db.select().from(studyVariables).where(eq(studyVariables.key, "recruiting"))).toEqual([]);
    expect(await database.db.select().from(studyCodeLists).where(eq(studyCodeLists.listKey, "welcome"))).toEqual([]);
    expect(await audited("study.status.update")).toEqual([]);
  });

  it("audits updateStudySettings (study:configure) under the actor given, the CLI's by default", async () => {
    await updateStudySettings(database.db, "flu-watch", { strictRules: true }, "operator-cli", { clock: systemClock });
    await updateStudySettings(database.db, "flu-watch", { timeZone: "Europe/Amsterdam" }, "researcher-ana", {
      clock: systemClock,
    });
    const entries = await audited("study.config.update");
    expect(entries.map((e) => [e.actor, e.details])).toEqual([
      ["operator-cli", { strictRules: { from: null, to: true } }],
      ["researcher-ana", { timeZone: { from: null, to: "Europe/Amsterdam" } }],
    ]);
  });
});
