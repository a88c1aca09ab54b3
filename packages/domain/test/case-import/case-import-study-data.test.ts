/**
 * A study's data besides its setup: responses, reports, confidential responses and the
 * confidential id map, code lists, counters and variables, from a dump shaped as case-backend
 * writes them (case-dump.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decimal128, Int32, Long, ObjectId } from "bson";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  confidentialIdMap,
  confidentialResponses,
  reports,
  studyCodeLists,
  studyCounters,
  studyVariables,
  surveyResponses,
} from "@studyflow/db";
import { caseAccountUuid, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseCodeListEntry,
  caseConfidentialIdMapEntry,
  caseConfidentialResponse,
  caseCounter,
  caseParticipant,
  caseReport,
  caseResponse,
  caseStudy,
  caseStudyVariable,
  caseSurvey,
  writeCaseDump,
  runCaseImport,
} from "./case-dump";

describe("importing a study's data from a case-backend dump", () => {
  let database: TestDatabase;
  let dir: string;
  const responseId = new ObjectId();
  const added = new Date("2024-05-01T10:00:00Z");
  const confidential = caseConfidentialResponse("conf-1", "intake.email", "ann@example.org");

  const studyDB = () => ({
    "study-infos": [caseStudy("flu"), caseStudy("other")],
    flu_surveys: [caseSurvey("intake", "v1", 1_700_000_000)],
    flu_participants: [caseParticipant("pid-1")],
    flu_surveyResponses: [
      caseResponse("pid-1", "intake", "v1", 1_700_000_100, { _id: responseId }),
      caseResponse("pid-1", "intake", "v1", 1_700_000_200, { value: "1" }),
      { ...caseResponse("", "intake", "v1", 1_700_000_300), _id: new ObjectId("65b000000000000000000001") },
    ],
    flu_reports: [caseReport("pid-1", "symptoms", responseId.toHexString(), 1_700_000_101)],
    flu_confidentialResponses: [confidential],
    other_surveyResponses: [caseResponse("pid-9", "weekly", "v9", 1_700_000_000)],
    "confidential-id-map": [
      caseConfidentialIdMapEntry("flu", "conf-1", "profile-1"),
      caseConfidentialIdMapEntry("gone", "conf-2", "profile-2"),
    ],
    studyCodeLists: [
      caseCodeListEntry("flu", "invites", "A1", added),
      caseCodeListEntry("flu", "invites", "B2", added),
      caseCodeListEntry("other", "invites", "A1", added),
    ],
    studyCounters: [caseCounter("flu", "participant-number", 41)],
    studyVariables: [
      caseStudyVariable("flu", "maxParticipants", "int", 250),
      caseStudyVariable("flu", "closesAt", "date", new Date("2027-01-01T00:00:00Z")),
      caseStudyVariable("flu", "welcome", "string", null),
      caseStudyVariable("flu", "odd", "duration", "5m"),
    ],
  });

  const base = studyDB();

  const options = (over: Partial<CaseImportOptions> = {}): CaseImportOptions => ({
    dumpDir: join(dir, "dump"),
    instance: "tr",
    dbPrefix: "",
    only: ["studies"],
    dryRun: false,
    replace: false,
    batchSize: 2,
    ...over,
  });

  const run = (over: Partial<CaseImportOptions> = {}) => runCaseImport(database.db, options(over));

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "case-import-data-"));
    await writeCaseDump(join(dir, "dump"), { instance: "tr", databases: { studyDB: base } });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a dry run writes none of it", async () => {
    const { summary } = await run({ dryRun: true });
    expect(summary.collections.find((c) => c.collection === "flu_surveyResponses")).toMatchObject({
      inserted: 2,
      skipped: 1,
    });
    expect(await database.db.select().from(surveyResponses)).toEqual([]);
    expect(await database.db.select().from(studyVariables)).toEqual([]);
  });

  it("imports responses, reports, confidential responses, the id map, code lists, counters and variables", async () => {
    const { problems } = await run({ study: "flu" });

    const responses = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.studyKey, "flu"))
      .orderBy(asc(surveyResponses.submittedAt));
    expect(responses).toHaveLength(2);
    expect(responses[0]).toEqual({
      id: caseAccountUuid(responseId.toHexString()),
      studyKey: "flu",
      participantId: "pid-1",
      key: "intake",
      versionId: "v1",
      openedAt: 1_700_000_040,
      submittedAt: 1_700_000_100,
      arrivedAt: 1_700_000_101,
      responses: [
        {
          key: "intake.Q1",
          meta: {
            position: 0,
            localeCode: "en",
            rendered: [1_700_000_050],
            displayed: null,
            responded: [1_700_000_090],
          },
          response: { key: "rg", items: [{ key: "scg", items: [{ key: "2" }] }] },
        },
      ],
      context: { session: "", engineVersion: "1.2.0" },
    });
    // --study flu: the other study's responses are not this run's
    expect(await database.db.select().from(surveyResponses).where(eq(surveyResponses.studyKey, "other"))).toEqual([]);

    expect(await database.db.select().from(reports)).toEqual([
      {
        id: expect.any(String),
        studyKey: "flu",
        participantId: "pid-1",
        key: "symptoms",
        responseId: caseAccountUuid(responseId.toHexString()),
        eventType: "IMPORTED",
        timestamp: 1_700_000_101,
        data: [
          { key: "fever", value: "yes", dtype: "string" },
          { key: "count", value: "3" },
        ],
      },
    ]);

    const [secret] = await database.db.select().from(confidentialResponses);
    expect(secret).toMatchObject({
      id: caseAccountUuid(confidential._id.toHexString()),
      studyKey: "flu",
      confidentialId: "conf-1",
      key: "intake.email",
      responses: [
        { key: "intake.email", confidentialMode: "replace", response: { items: [{ value: "ann@example.org" }] } },
      ],
    });
    expect(secret!.createdAt.getTime()).toBe(confidential._id.getTimestamp().getTime());
    expect(await database.db.select().from(confidentialIdMap)).toEqual([
      { studyKey: "flu", confidentialId: "conf-1", profileId: "profile-1" },
    ]);

    expect(
      (await database.db.select().from(studyCodeLists).orderBy(asc(studyCodeLists.code))).map((row) => [
        row.studyKey,
        row.listKey,
        row.code,
        row.addedAt.getTime(),
      ]),
    ).toEqual([
      ["flu", "invites", "A1", added.getTime()],
      ["flu", "invites", "B2", added.getTime()],
    ]);
    expect(await database.db.select().from(studyCounters)).toEqual([
      { studyKey: "flu", scope: "participant-number", value: 41 },
    ]);
    const variables = await database.db.select().from(studyVariables).orderBy(asc(studyVariables.key));
    expect(variables.map((row) => [row.key, row.type, row.value])).toEqual([
      ["closesAt", "date", Date.UTC(2027, 0, 1) / 1000],
      ["maxParticipants", "int", 250],
      ["welcome", "string", ""],
    ]);
    expect(variables[1]).toMatchObject({
      label: "Label of maxParticipants",
      uiPriority: 2,
      configs: { min: 0, max: 100 },
    });
    expect(variables[1]!.valueUpdatedAt.toISOString()).toBe("2024-01-03T00:00:00.000Z");

    expect(problems.map((p) => `${p.collection} ${p.id}: ${p.reason}`)).toEqual([
      "flu_surveyResponses 65b000000000000000000001: the response has no participantID",
      expect.stringMatching(/^studyVariables [0-9a-f]{24}: type "duration"/),
    ]);
  });

  it("a rerun changes nothing; the other study's data comes with its own run", async () => {
    const again = await run({ study: "flu" });
    expect(again.summary.changed).toBe(0);
    const byName = Object.fromEntries(again.summary.collections.map((c) => [c.collection, c]));
    expect(byName["flu_surveyResponses"]).toMatchObject({ unchanged: 2, skipped: 1 });
    expect(byName["flu_reports"]).toMatchObject({ unchanged: 1 });
    expect(byName["flu_confidentialResponses"]).toMatchObject({ unchanged: 1 });
    expect(byName["confidential-id-map"]).toMatchObject({ unchanged: 1, ignored: 1 });
    expect(byName["studyCodeLists"]).toMatchObject({ unchanged: 2, ignored: 1 });
    expect(byName["studyCounters"]).toMatchObject({ unchanged: 1 });
    expect(byName["studyVariables"]).toMatchObject({ unchanged: 3, skipped: 1 });

    const all = await run();
    // the other study, its response and its code
    expect(all.summary.changed).toBe(3);
    expect(await database.db.select().from(surveyResponses).where(eq(surveyResponses.studyKey, "other"))).toHaveLength(
      1,
    );
    expect((await run()).summary.changed).toBe(0);
  });

  it("a changed counter and response are updated", async () => {
    const changed = {
      ...base,
      studyCounters: [caseCounter("flu", "participant-number", 42)],
      flu_surveyResponses: [
        caseResponse("pid-1", "intake", "v1", 1_700_000_100, { _id: responseId, value: "3" }),
        ...base.flu_surveyResponses.slice(1),
      ],
    };
    await writeCaseDump(join(dir, "changed"), { instance: "tr", databases: { studyDB: changed } });
    const { summary } = await run({ dumpDir: join(dir, "changed") });
    expect(summary.changed).toBe(2);
    expect(await database.db.select({ value: studyCounters.value }).from(studyCounters)).toEqual([{ value: 42 }]);
    const [row] = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.id, caseAccountUuid(responseId.toHexString())));
    expect(JSON.stringify(row!.responses)).toContain('"key":"3"');
  });

  it("a dry run after the change says which response the older dump would update, and writes nothing", async () => {
    const { summary } = await run({ dryRun: true });
    expect(summary.collections.find((c) => c.collection === "flu_surveyResponses")).toMatchObject({
      inserted: 0,
      updated: 1,
      unchanged: 1,
      skipped: 1,
    });
    const [row] = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.id, caseAccountUuid(responseId.toHexString())));
    expect(JSON.stringify(row!.responses)).toContain('"key":"3"');
  });

  it("BSON values inside answers are stored as JSON: ObjectId as hex, dates as ISO text, Int64 and Decimal128", async () => {
    const id = new ObjectId();
    const response = caseResponse("pid-1", "intake", "v1", 1_700_000_400, { _id: id });
    const items = [
      {
        key: "intake.Q9",
        meta: { position: new Int32(3) },
        response: {
          key: "rg",
          items: [
            { key: "ref", value: new ObjectId("65b0000000000000000000aa") },
            { key: "when", value: new Date("2024-02-03T04:05:06.000Z") },
            { key: "big", value: Long.fromString("1152921504606846976") },
            { key: "exact", value: Decimal128.fromString("12.50") },
            { key: "plain", value: "x", dtype: "string" },
          ],
        },
      },
    ];
    await writeCaseDump(join(dir, "bson-values"), {
      instance: "tr",
      databases: {
        studyDB: { "study-infos": [caseStudy("flu")], flu_surveyResponses: [{ ...response, responses: items }] },
      },
    });
    const { summary } = await run({ dumpDir: join(dir, "bson-values") });
    expect(summary.collections.find((c) => c.collection === "flu_surveyResponses")).toMatchObject({ inserted: 1 });
    const [row] = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.id, caseAccountUuid(id.toHexString())));
    expect(row!.responses).toEqual([
      {
        key: "intake.Q9",
        meta: { position: 3 },
        response: {
          key: "rg",
          items: [
            { key: "ref", value: "65b0000000000000000000aa" },
            { key: "when", value: "2024-02-03T04:05:06.000Z" },
            { key: "big", value: 1152921504606846976 },
            { key: "exact", value: "12.50" },
            { key: "plain", value: "x", dtype: "string" },
          ],
        },
      },
    ]);
    // the same dump again: unchanged
    const again = await run({ dumpDir: join(dir, "bson-values") });
    expect(again.summary.collections.find((c) => c.collection === "flu_surveyResponses")).toMatchObject({
      unchanged: 1,
    });
  });

  it("text with tabs, line breaks and backslashes arrives as it was; a response PostgreSQL refuses is reported and the rest come in", async () => {
    const odd = new ObjectId();
    const refused = new ObjectId();
    const after = new ObjectId();
    const text = 'tab\there\nnew line\r\\ back\\slash "quoted" \\N';
    const oddResponse = {
      ...caseResponse("pid\t1\\x", "intake", "v\n1", 1_700_000_500, { _id: odd }),
      context: { note: text },
    };
    oddResponse.responses[0]!.response = { key: "rg", items: [{ key: "txt", value: text }] } as never;
    const refusedResponse = caseResponse("pid-1", "intake", "v1", 1_700_000_600, { _id: refused });
    // jsonb has no place for U+0000: PostgreSQL refuses the document
    refusedResponse.responses[0]!.response = { key: "rg", items: [{ key: "txt", value: "nul \u0000 here" }] } as never;
    await writeCaseDump(join(dir, "odd-text"), {
      instance: "tr",
      databases: {
        studyDB: {
          "study-infos": [caseStudy("flu")],
          flu_surveyResponses: [
            oddResponse,
            refusedResponse,
            caseResponse("pid-1", "intake", "v1", 1_700_000_700, { _id: after }),
          ],
        },
      },
    });
    const { summary, problems } = await run({ dumpDir: join(dir, "odd-text"), batchSize: 3 });
    expect(summary.collections.find((c) => c.collection === "flu_surveyResponses")).toMatchObject({
      inserted: 2,
      skipped: 1,
    });
    expect(problems).toEqual([
      // this smaller dump lacks the study an earlier test's dump brought in: reported, never removed
      expect.objectContaining({ collection: "study-infos", id: "other" }),
      expect.objectContaining({ collection: "flu_surveyResponses", id: refused.toHexString() }),
    ]);
    const [row] = await database.db
      .select()
      .from(surveyResponses)
      .where(eq(surveyResponses.id, caseAccountUuid(odd.toHexString())));
    expect(row).toMatchObject({ participantId: "pid\t1\\x", versionId: "v\n1", context: { note: text } });
    expect(row!.responses).toEqual([
      expect.objectContaining({ response: { key: "rg", items: [{ key: "txt", value: text }] } }),
    ]);
    const [later] = await database.db
      .select({ id: surveyResponses.id })
      .from(surveyResponses)
      .where(eq(surveyResponses.id, caseAccountUuid(after.toHexString())));
    expect(later).toBeDefined();
  });
});
