import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissions, type PermissionLimiter } from "@studyflow/db";
import {
  assertPermission,
  assertStudyPermission,
  grantedStudyKeys,
  grantingActions,
  hasPermission,
  limiterAllows,
  studyResource,
  type ManagementSubject,
  type PermissionRequest,
} from "@studyflow/domain/access";
import { ReadCache, attachReadCache } from "@studyflow/domain/cache";
import { Forbidden } from "@studyflow/domain/errors";
import { systemClock } from "@studyflow/domain/foundation";
import { grantPermission } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const person = (subject: string): ManagementSubject => ({ subject, isAdmin: false });
const account = (subject: string): ManagementSubject => ({ subject, isAdmin: false, subjectType: "service-account" });

/** [who, request, allowed, why] */
const CASES: [ManagementSubject, PermissionRequest, boolean, string][] = [
  [{ subject: "nobody", isAdmin: true }, { ...studyResource("s1"), action: "delete-study" }, true, "admins pass"],
  [person("nobody"), { ...studyResource("s1"), action: "read-study-config" }, false, "no grant"],
  [person("legacy"), { ...studyResource("s1"), action: "manage-surveys" }, true, "sf name, sf check"],
  [person("legacy"), { ...studyResource("s1"), action: "update-survey" }, true, "sf grant opens the CASE alias"],
  [person("legacy"), { ...studyResource("s1"), action: "delete-survey-version" }, true, "every survey alias"],
  [person("legacy"), { ...studyResource("s2"), action: "update-survey" }, false, "other study"],
  [person("legacy"), { ...studyResource("s1"), action: "update-study-rules" }, false, "no manage-rules grant"],
  [
    person("legacy"),
    { ...studyResource("s1"), action: "read-study-config" },
    false,
    "manage-surveys is not read-study-config",
  ],
  [
    person("legacy"),
    { ...studyResource("s1"), action: ["read-study-config", "manage-surveys"] },
    true,
    "any of a list",
  ],
  [person("case"), { ...studyResource("s1"), action: "manage-surveys" }, false, "CASE grant does not open the sf name"],
  [person("case"), { ...studyResource("s9"), action: "update-survey" }, true, "resource key * is every study"],
  [person("star"), { ...studyResource("s1"), action: "delete-study" }, true, "action * is every action"],
  [person("star"), { ...studyResource("s2"), action: "delete-study" }, false, "but only for its study"],
  [
    person("star"),
    { resourceType: "messaging", resourceKeys: ["global-email-templates"], action: "*" },
    false,
    "a study grant is no messaging grant",
  ],
  [
    person("mail"),
    { resourceType: "messaging", resourceKeys: ["global-email-templates"], action: "*" },
    true,
    "messaging grant",
  ],
  [
    person("mail"),
    { resourceType: "messaging", resourceKeys: ["sms-templates"], action: "*" },
    false,
    "other messaging key",
  ],
  [person("mail"), { ...studyResource("global-email-templates"), action: "*" }, false, "not a study"],
  [person("deleter"), { resourceType: "users", resourceKeys: ["*"], action: "delete-users" }, true, "users grant"],
  [
    person("robot"),
    { ...studyResource("s1"), action: "get-responses" },
    false,
    "the account's grant is not a person's",
  ],
  [account("robot"), { ...studyResource("s1"), action: "get-responses" }, true, "service-account grant"],
  [
    account("legacy"),
    { ...studyResource("s1"), action: "manage-surveys" },
    false,
    "a person's grant is not an account's",
  ],
  [
    person("limited"),
    { ...studyResource("s1"), action: "update-survey", limiter: { surveyKey: "intake" } },
    true,
    "limiter matches one map",
  ],
  [
    person("limited"),
    { ...studyResource("s1"), action: "update-survey", limiter: { surveyKey: "weekly" } },
    true,
    "limiter matches the other map",
  ],
  [
    person("limited"),
    { ...studyResource("s1"), action: "update-survey", limiter: { surveyKey: "exit" } },
    false,
    "limiter matches no map",
  ],
  [
    person("limited"),
    { ...studyResource("s1"), action: "update-survey" },
    false,
    "limited grant, request without limiter",
  ],
  [
    person("limited"),
    { ...studyResource("s1"), action: "update-survey", limiter: { surveyKey: "intake", reportKey: "x" } },
    false,
    "every requested key must agree",
  ],
];

describe("permissions", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.db;
    await grantPermission(db, "legacy", "s1", "manage-surveys");
    await grantPermission(db, "legacy", "s3", "manage-surveys");
    await grantPermission(db, "star", "s1", "*");
    const grant = (
      subjectId: string,
      values: Partial<typeof permissions.$inferInsert> & { limiter?: PermissionLimiter | null },
    ) => db.insert(permissions).values({ subjectId, studyKey: "*", action: "*", ...values });
    await grant("case", { action: "update-survey" });
    await grant("mail", { resourceType: "messaging", studyKey: "global-email-templates" });
    await grant("deleter", { resourceType: "users", action: "delete-users" });
    await grant("robot", { subjectType: "service-account", studyKey: "s1", action: "get-responses" });
    await grant("limited", {
      studyKey: "s1",
      action: "update-survey",
      limiter: [{ surveyKey: "intake" }, { surveyKey: "weekly" }],
    });
  });
  afterAll(async () => {
    await database.drop();
  });

  const checkAll = async () => {
    for (const [who, request, allowed, why] of CASES) {
      expect({ why, allowed: await hasPermission(database.db, who, request) }).toEqual({ why, allowed });
      const outcome = await assertPermission(database.db, who, request).then(
        () => "passed",
        (error: unknown) => (error instanceof Forbidden ? "forbidden" : error),
      );
      expect({ why, outcome }).toEqual({ why, outcome: allowed ? "passed" : "forbidden" });
    }
  };

  it("decides as case-backend does, with sf's names as aliases (from the database)", checkAll);

  it("answers the same from the read cache, and forgets a subject's grants when they change", async () => {
    attachReadCache(database.db, new ReadCache({ clock: systemClock }));
    await checkAll();
    await checkAll();
    await expect(assertStudyPermission(database.db, person("legacy"), "s1", "manage-rules")).rejects.toThrow(
      'missing permission "manage-rules" for study "s1"',
    );
    await grantPermission(database.db, "legacy", "s1", "manage-rules");
    await assertStudyPermission(database.db, person("legacy"), "s1", "update-study-rules");
  });

  it("keeps assertStudyPermission's signature and message, and names a limiter's subject", async () => {
    await assertStudyPermission(database.db, person("legacy"), "s3", "manage-surveys");
    await expect(assertStudyPermission(database.db, person("legacy"), "s2", "manage-surveys")).rejects.toThrow(
      new Forbidden('missing permission "manage-surveys" for study "s2"'),
    );
    await assertStudyPermission(database.db, person("limited"), "s1", "update-survey", { surveyKey: "intake" });
    await expect(
      assertPermission(database.db, person("mail"), {
        resourceType: "messaging",
        resourceKeys: ["scheduled-emails"],
        action: "*",
      }),
    ).rejects.toThrow('missing permission "*" for messaging "scheduled-emails"');
    await expect(
      assertStudyPermission(database.db, person("nobody"), "s1", ["read-study-config", "manage-rules"]),
    ).rejects.toThrow('missing permission "read-study-config" or "manage-rules" for study "s1"');
  });

  it("shows studies only for study grants of the subject's type", async () => {
    expect((await grantedStudyKeys(database.db, person("legacy"))).sort()).toEqual(["s1", "s3"]);
    expect(await grantedStudyKeys(database.db, person("mail"))).toEqual([]);
    expect(await grantedStudyKeys(database.db, person("deleter"))).toEqual([]);
    expect(await grantedStudyKeys(database.db, person("robot"))).toEqual([]);
    expect(await grantedStudyKeys(database.db, account("robot"))).toEqual(["s1"]);
  });

  it("expands aliases and matches limiters as case-backend's checkLimiter", () => {
    expect(grantingActions("update-study-status").sort()).toEqual(["*", "update-study-props", "update-study-status"]);
    expect(grantingActions("get-responses").sort()).toEqual(["*", "get-responses"]);
    expect(limiterAllows(null)).toBe(true);
    expect(limiterAllows([{ a: "1" }])).toBe(false);
    expect(limiterAllows([{ a: "1" }], {})).toBe(true);
    expect(limiterAllows([{ a: "1", b: "2" }], { a: "1" })).toBe(true);
    // a key the map lacks reads as "", as a Go map lookup does
    expect(limiterAllows([{ a: "1" }], { a: "1", b: "" })).toBe(true);
    expect(limiterAllows([], { a: "1" })).toBe(false);
  });
});
