import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId, serialize } from "bson";
import { and, asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  caseImportCheckpoints,
  participantMessageSchedule,
  participants,
  profiles,
  researcherSubscriptions,
  studies,
  studyRules,
  surveyVersions,
  users,
} from "@studyflow/db";
import { caseAccountUuid, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseParticipant,
  caseRules,
  caseStudy,
  caseSurvey,
  caseUser,
  enterRule,
  int64,
  writeCaseDump,
  CASE_PASSWORD_HASH,
  UNREADABLE_DOCUMENT,
  runCaseImport,
} from "./case-dump";

const clock = () => Date.UTC(2026, 0, 1);

describe("importing a case-backend dump", () => {
  let database: TestDatabase;
  let dir: string;
  const profileId = new ObjectId();
  const childId = new ObjectId();
  const user = caseUser("Ann@Example.org", CASE_PASSWORD_HASH, [profileId, childId]);
  const flu = caseStudy("flu", { idMappingMethod: "sha224-b64", systemDefaultStudy: true });

  const dump = (gzip: boolean) => ({
    instance: "tr",
    prefix: "case_",
    gzip,
    databases: {
      studyDB: {
        "study-infos": [flu, caseStudy("bad", { idMappingMethod: "rot13" }), caseStudy("native")],
        studyRules: [
          caseRules("flu", 1_700_000_300, [enterRule("new")], true),
          caseRules("flu", 1_700_000_100, [enterRule("old")]),
          caseRules("flu", 1_700_000_200, [{ name: "NO_SUCH_ACTION" }]),
        ],
        flu_surveys: [
          caseSurvey("intake", "v1", 1_700_000_000, 1_700_000_050),
          caseSurvey("intake", "v2", 1_700_000_050),
        ],
        flu_participants: [
          caseParticipant("pid-1", {
            messages: [{ id: "m1", type: "reminder", scheduledFor: int64(1_800_000_000) }],
          }),
          caseParticipant("pid-2", { studyStatus: "exited" }),
          caseParticipant("tmp-1", { studyStatus: "temporary" }),
          { ...caseParticipant(""), _id: new ObjectId("65a000000000000000000001") },
          UNREADABLE_DOCUMENT,
        ],
        native_participants: [caseParticipant("never")],
      },
      users: { users: [user, caseUser("weak@example.org", "plain-text", [new ObjectId()])] },
    },
  });

  const options = (over: Partial<CaseImportOptions> = {}): CaseImportOptions => ({
    dumpDir: dir,
    instance: "tr",
    dbPrefix: "case_",
    only: ["studies", "users"],
    dryRun: false,
    replace: false,
    batchSize: 2,
    ...over,
  });

  const run = (over: Partial<CaseImportOptions> = {}) => runCaseImport(database.db, options(over));

  const count = async (table: typeof studies | typeof participants | typeof users | typeof surveyVersions) =>
    Number((await database.db.execute<{ n: string }>(sql`select count(*) as n from ${table}`))[0]!.n);

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "case-import-"));
    await createStudy(database.db, { key: "native" });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a dry run counts and reports, and writes nothing", async () => {
    await writeCaseDump(join(dir, "plain"), dump(false));
    const { summary, problems } = await run({ dumpDir: join(dir, "plain"), dryRun: true });
    expect(summary.changed).toBeGreaterThan(0);
    expect(problems.length).toBeGreaterThan(0);
    expect(await count(studies)).toBe(1);
    expect(await count(users)).toBe(0);
    expect(await database.db.select().from(caseImportCheckpoints)).toEqual([]);
  });

  it("imports studies, rules, surveys, participants and accounts; reports what it could not", async () => {
    const { summary, problems } = await run({ dumpDir: join(dir, "plain") });
    const [study] = await database.db.select().from(studies).where(eq(studies.key, "flu"));
    expect(study).toMatchObject({
      status: "active",
      secret: "secret-of-flu",
      idMappingMethod: "sha224-b64",
      props: {
        name: { en: "Study flu", de: "Studie flu" },
        description: { en: "About flu" },
        tags: ["ticks"],
        localisedTags: [{ en: "ticks", nl: "teken" }],
        startDate: "2023-11-14",
        systemDefaultStudy: true,
      },
    });
    expect(await database.db.select({ email: researcherSubscriptions.email }).from(researcherSubscriptions)).toEqual([
      { email: "researcher@example.org" },
    ]);

    const rules = await database.db
      .select()
      .from(studyRules)
      .where(eq(studyRules.studyKey, "flu"))
      .orderBy(asc(studyRules.version));
    // three uploads by time: old (1), invalid (2, skipped), new (3): the newest is the current one
    expect(rules.map((row) => [row.version, JSON.stringify(row.rules).includes('"new"')])).toEqual([
      [1, false],
      [3, true],
    ]);
    expect(rules[1]!.uploadedAt.getTime()).toBe(1_700_000_300_000);

    const versions = await database.db
      .select()
      .from(surveyVersions)
      .where(eq(surveyVersions.studyKey, "flu"))
      .orderBy(asc(surveyVersions.versionId));
    expect(
      versions.map((v) => [v.surveyKey, v.versionId, v.publishedAt.getTime(), v.unpublishedAt?.getTime() ?? null]),
    ).toEqual([
      ["intake", "v1", 1_700_000_000_000, 1_700_000_050_000],
      ["intake", "v2", 1_700_000_050_000, null],
    ]);
    const definition = versions[0]!.definition as { surveyDefinition: { items: { validations: unknown[] }[] } };
    expect(definition.surveyDefinition.items[0]!.validations[0]).toMatchObject({
      key: "v1",
      rule: { name: "isDefined" },
    });
    expect(definition).not.toHaveProperty("versionId");
    expect(definition).not.toHaveProperty("_id");

    const rows = await database.db
      .select()
      .from(participants)
      .where(eq(participants.studyKey, "flu"))
      .orderBy(asc(participants.participantId));
    expect(rows.map((row) => [row.participantId, row.studyStatus])).toEqual([
      ["pid-1", "active"],
      ["pid-2", "exited"],
      ["tmp-1", "temporary"],
    ]);
    expect(rows[0]).toMatchObject({
      enteredAt: 1_700_000_000,
      modifiedAt: 1_700_000_100,
      flags: { group: "a", consent: "yes" },
      linkingCodes: {},
      assignedSurveys: [{ surveyKey: "weekly", validFrom: 1_700_000_000, validUntil: 0, category: "prio" }],
      lastSubmissions: { intake: 1_700_000_050 },
      messages: [{ id: "m1", type: "reminder", scheduledFor: 1_800_000_000 }],
    });
    expect(
      await database.db
        .select({ dueAt: participantMessageSchedule.dueAt })
        .from(participantMessageSchedule)
        .where(
          and(eq(participantMessageSchedule.studyKey, "flu"), eq(participantMessageSchedule.participantId, "pid-1")),
        ),
    ).toEqual([{ dueAt: 1_800_000_000 }]);
    // the study studyflow had of its own is left alone
    expect(await database.db.select().from(participants).where(eq(participants.studyKey, "native"))).toEqual([]);

    const [account] = await database.db.select().from(users).where(eq(users.email, "ann@example.org"));
    expect(account).toMatchObject({
      id: caseAccountUuid(user._id.toHexString()),
      passwordHash: CASE_PASSWORD_HASH,
      preferredLanguage: "nl",
      subscribedToNewsletter: true,
      subscribedToWeekly: true,
      weeklyMessageDayOfWeek: 3,
    });
    expect(account!.accountConfirmedAt?.getTime()).toBe(1_690_000_000_000);
    const accountProfiles = await database.db
      .select()
      .from(profiles)
      .where(eq(profiles.userId, account!.id))
      .orderBy(asc(profiles.avatarId));
    expect(accountProfiles.map((p) => [p.id, p.mainProfile, p.avatarId, p.alias])).toEqual([
      [childId.toHexString(), false, "bird", "child 1"],
      [profileId.toHexString(), true, "default", "Ann@Example.org"],
    ]);

    const reasons = problems.map((p) => `${p.collection} ${p.id}: ${p.reason}`);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^study-infos .*rot13/),
        expect.stringMatching(/^study-infos .*studyflow already has a study "native"/),
        expect.stringMatching(/^studyRules .*do not validate/),
        expect.stringMatching(/^flu_participants 65a000000000000000000001: .*no participantID/),
        expect.stringMatching(/^flu_participants #4: not a readable BSON document/),
        expect.stringMatching(/^users .*not an argon2id hash/),
      ]),
    );
    expect(problems).toHaveLength(6);
    expect(summary.skipped).toBe(6);
    expect(summary.collections.find((c) => c.collection === "flu_participants")).toMatchObject({
      inserted: 3,
      skipped: 2,
    });
  });

  it("a second run, from the same dump gzipped, changes nothing and says so", async () => {
    await writeCaseDump(join(dir, "gzip"), dump(true));
    const before = await database.db.select().from(participants).orderBy(asc(participants.participantId));
    const { summary } = await run({ dumpDir: join(dir, "gzip") });
    expect(summary.changed).toBe(0);
    expect(summary.collections.every((c) => c.inserted === 0 && c.updated === 0)).toBe(true);
    expect(summary.collections.find((c) => c.collection === "users")).toMatchObject({ unchanged: 1, skipped: 1 });
    expect(await database.db.select().from(participants).orderBy(asc(participants.participantId))).toEqual(before);
  });

  it("a changed document is updated; --study takes one study; --replace takes over a study studyflow had", async () => {
    const changed = dump(false);
    const first = changed.databases.studyDB.flu_participants[0] as ReturnType<typeof caseParticipant>;
    first.flags = { group: "b", consent: "yes" };
    first.messages = [];
    await writeCaseDump(join(dir, "changed"), changed);
    const { summary } = await run({ dumpDir: join(dir, "changed"), study: "flu", only: ["studies"] });
    expect(summary.collections.find((c) => c.collection === "flu_participants")).toMatchObject({
      updated: 1,
      unchanged: 2,
    });
    expect(summary.collections.find((c) => c.collection === "study-infos")).toMatchObject({ ignored: 2, unchanged: 1 });
    const [row] = await database.db.select().from(participants).where(eq(participants.participantId, "pid-1"));
    expect(row).toMatchObject({ flags: { group: "b", consent: "yes" }, messages: [], version: 2 });
    expect(await database.db.select().from(participantMessageSchedule)).toEqual([]);

    const replaced = await run({ dumpDir: join(dir, "changed"), study: "native", only: ["studies"], replace: true });
    expect(replaced.problems).toEqual([]);
    const [native] = await database.db.select().from(studies).where(eq(studies.key, "native"));
    expect(native).toMatchObject({ secret: "secret-of-native", idMappingMethod: "sha256" });
    expect(await database.db.select().from(participants).where(eq(participants.studyKey, "native"))).toHaveLength(1);
  });

  it("resumes an interrupted collection after its last committed batch", async () => {
    const many = Array.from({ length: 7 }, (_, i) => caseParticipant(`r${i}`));
    const spec = dump(false);
    spec.databases.studyDB.flu_participants = many;
    const path = await writeCaseDump(join(dir, "resume"), spec);
    const size = Buffer.concat(many.map((doc) => Buffer.from(serialize(doc)))).length;
    // as a run killed after its second batch of two leaves it
    await database.db
      .insert(caseImportCheckpoints)
      .values({
        collection: "case_tr_studyDB/flu_participants",
        fileBytes: size,
        documentsDone: 4,
        updatedAt: new Date(clock()),
      })
      .onConflictDoUpdate({
        target: caseImportCheckpoints.collection,
        set: { fileBytes: size, documentsDone: 4, completedAt: null },
      });
    const { summary } = await run({ dumpDir: path, only: ["studies"], study: "flu" });
    expect(summary.collections.find((c) => c.collection === "flu_participants")).toMatchObject({
      resumedAfter: 4,
      read: 3,
      inserted: 3,
    });
    const [checkpoint] = await database.db
      .select()
      .from(caseImportCheckpoints)
      .where(eq(caseImportCheckpoints.collection, "case_tr_studyDB/flu_participants"));
    expect(checkpoint).toMatchObject({ documentsDone: 7 });
    expect(checkpoint!.completedAt).not.toBeNull();
  });
});
