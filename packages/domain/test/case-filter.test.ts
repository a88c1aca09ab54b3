// case-admin's Mongo-style filters become SQL that selects exactly what Mongo would. fast-check
// generates filters of the whole subset ($and, $or, comparisons, $in/$nin with null, $exists, map
// entries, report data elements) over small value domains, so that conditions hit; each runs on
// real Postgres against stored participants, responses and reports, and the ids it selects must be
// those an in-memory evaluator of the same Mongo subset selects from the same documents.
import { and, eq, sql, type SQL } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participants, reports, surveyResponses } from "@studyflow/db";
import { parseCaseJsonParam, translateCaseFilter, translateCaseSort } from "@studyflow/domain/case-filter";
import { Invalid } from "@studyflow/domain/errors";
import { createStudy } from "@studyflow/domain/study-setup";
import type { CaseFilterTarget } from "@studyflow/domain/case-filter";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const STUDY = "filters";
const OTHER = "other-study";

type Doc = Record<string, unknown> & { id: string };

// ---- the in-memory evaluator: Mongo's meaning of the subset ------------------------------------------

const ELEMENT_FIELDS = new Set(["data"]);

/** A path's values in a document: one (or undefined, missing) for scalars and map entries, all elements' for data.X. */
function valuesAt(doc: Doc, path: string): { many: boolean; values: unknown[] } {
  const [head, sub] = path.split(".") as [string, string | undefined];
  if (sub === undefined) return { many: false, values: [doc[head]] };
  const container = doc[head];
  if (ELEMENT_FIELDS.has(head)) {
    return {
      many: true,
      values: (container as Record<string, unknown>[]).map((element) => element[sub]).filter((v) => v !== undefined),
    };
  }
  return { many: false, values: [(container as Record<string, unknown>)[sub]] };
}

function equalsAt(doc: Doc, path: string, value: unknown): boolean {
  const { many, values } = valuesAt(doc, path);
  if (value === null) return !many && (values[0] === undefined || values[0] === null);
  return values.some((v) => v === value);
}

function compare(op: string, left: unknown, right: unknown): boolean {
  if (left === undefined || left === null || typeof left !== typeof right) return false;
  const l = left as string | number;
  const r = right as string | number;
  return op === "$gt" ? l > r : op === "$gte" ? l >= r : op === "$lt" ? l < r : l <= r;
}

function matchesField(doc: Doc, path: string, condition: unknown): boolean {
  if (typeof condition !== "object" || condition === null) return equalsAt(doc, path, condition);
  return Object.entries(condition).every(([op, operand]) => {
    switch (op) {
      case "$eq":
        return equalsAt(doc, path, operand);
      case "$ne":
        return !equalsAt(doc, path, operand);
      case "$in":
        return (operand as unknown[]).some((v) => equalsAt(doc, path, v));
      case "$nin":
        return !(operand as unknown[]).some((v) => equalsAt(doc, path, v));
      case "$exists":
        return (valuesAt(doc, path).values[0] !== undefined) === operand;
      default:
        return compare(op, valuesAt(doc, path).values[0], operand);
    }
  });
}

function matches(doc: Doc, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, value]) => {
    if (key === "$and") return (value as Record<string, unknown>[]).every((f) => matches(doc, f));
    if (key === "$or") return (value as Record<string, unknown>[]).some((f) => matches(doc, f));
    return matchesField(doc, key, value);
  });
}

// ---- documents and filters --------------------------------------------------------------------------

const word = fc.constantFrom("a", "b", "B", "ab", "z", "0", "");
const mapKey = fc.constantFrom("k1", "k2", "k3");
const seconds = fc.integer({ min: 0, max: 6 }).map((n) => 1_700_000_000 + n);
const stringMap = fc.dictionary(mapKey, word, { maxKeys: 3 }).map((d) => ({ ...d }));
const secondsMap = fc.dictionary(mapKey, seconds, { maxKeys: 3 }).map((d) => ({ ...d }));
const RESPONSE_IDS = ["0b9d5a4e-3c1c-4a7b-9d51-111111111111", "0b9d5a4e-3c1c-4a7b-9d51-222222222222"];

type FieldGen = {
  path: fc.Arbitrary<string>;
  value: fc.Arbitrary<string | number>;
  canBeMissing: boolean;
  elements?: true;
};
const FIELDS: Record<CaseFilterTarget, FieldGen[]> = {
  participants: [
    { path: fc.constant("participantID"), value: word, canBeMissing: false },
    { path: fc.constant("studyStatus"), value: fc.constantFrom("active", "exited", "temporary"), canBeMissing: false },
    { path: fc.constantFrom("enteredAt", "modifiedAt"), value: seconds, canBeMissing: false },
    { path: mapKey.map((k) => `flags.${k}`), value: word, canBeMissing: true },
    { path: mapKey.map((k) => `linkingCodes.${k}`), value: word, canBeMissing: true },
    { path: mapKey.map((k) => `lastSubmission.${k}`), value: seconds, canBeMissing: true },
  ],
  responses: [
    { path: fc.constantFrom("participantID", "key", "versionID"), value: word, canBeMissing: false },
    { path: fc.constantFrom("openedAt", "submittedAt", "arrivedAt"), value: seconds, canBeMissing: false },
    { path: mapKey.map((k) => `context.${k}`), value: word, canBeMissing: true },
  ],
  reports: [
    { path: fc.constantFrom("participantID", "key"), value: word, canBeMissing: false },
    { path: fc.constant("responseID"), value: fc.constantFrom("", ...RESPONSE_IDS), canBeMissing: false },
    { path: fc.constant("timestamp"), value: seconds, canBeMissing: false },
    { path: fc.constantFrom("data.key", "data.value"), value: word, canBeMissing: false, elements: true },
  ],
};

function condition(gen: FieldGen): fc.Arbitrary<unknown> {
  const nullable = gen.elements
    ? gen.value
    : fc.oneof({ weight: 4, arbitrary: gen.value }, { weight: 1, arbitrary: fc.constant(null) });
  const list = fc.array(nullable, { maxLength: 3 });
  const ops: fc.Arbitrary<unknown>[] = [
    gen.value,
    nullable.map((v) => ({ $eq: v })),
    nullable.map((v) => ({ $ne: v })),
    list.map((v) => ({ $in: v })),
    list.map((v) => ({ $nin: v })),
  ];
  if (!gen.elements) {
    ops.push(
      fc.tuple(fc.constantFrom("$gt", "$gte", "$lt", "$lte"), gen.value).map(([op, v]) => ({ [op]: v })),
      fc.tuple(gen.value, gen.value).map(([low, high]) => ({ $gte: low, $lt: high })),
    );
  }
  if (gen.canBeMissing) ops.push(fc.boolean().map((b) => ({ $exists: b })));
  return fc.oneof(...ops);
}

function filterOf(target: CaseFilterTarget): fc.Arbitrary<Record<string, unknown>> {
  const leaf = fc
    .constantFrom(...FIELDS[target])
    .chain((gen) => fc.tuple(gen.path, condition(gen)))
    .map(([path, cond]) => ({ [path]: cond }));
  const { tree } = fc.letrec<{ tree: Record<string, unknown> }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc
        .tuple(fc.constantFrom("$and", "$or"), fc.array(tie("tree"), { minLength: 1, maxLength: 3 }))
        .map(([op, branches]) => ({
          [op]: branches,
        })),
      fc
        .array(leaf, { minLength: 0, maxLength: 3 })
        .map((leaves) => Object.assign({}, ...leaves) as Record<string, unknown>),
    ),
  }));
  return tree;
}

// ---- stored data ------------------------------------------------------------------------------------

let t: TestDatabase;
const docs: Record<CaseFilterTarget, Doc[]> = { participants: [], responses: [], reports: [] };

async function selectIds(target: CaseFilterTarget, condition: SQL): Promise<string[]> {
  const table = target === "participants" ? participants : target === "responses" ? surveyResponses : reports;
  const rows = await t.db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.studyKey, STUDY), condition));
  return rows.map((row) => row.id).sort();
}

beforeAll(async () => {
  t = await createTestDatabase();
  await createStudy(t.db, { key: STUDY });
  await createStudy(t.db, { key: OTHER });
  const sample = <T>(arb: fc.Arbitrary<T>, n: number) => fc.sample(arb, { numRuns: n, seed: 42 });

  const participantDocs = sample(
    fc.record({
      participantID: word,
      studyStatus: fc.constantFrom("active", "exited", "temporary"),
      enteredAt: seconds,
      modifiedAt: seconds,
      flags: stringMap,
      linkingCodes: stringMap,
      lastSubmission: secondsMap,
    }),
    80,
  );
  for (const [i, doc] of participantDocs.entries()) {
    const [row] = await t.db
      .insert(participants)
      .values({
        studyKey: STUDY,
        participantId: `${doc.participantID}#${i}`, // unique per study; the filter sees the real column
        studyStatus: doc.studyStatus,
        enteredAt: doc.enteredAt,
        modifiedAt: doc.modifiedAt,
        flags: doc.flags,
        linkingCodes: doc.linkingCodes,
        lastSubmissions: doc.lastSubmission,
      })
      .returning({ id: participants.id });
    docs.participants.push({ ...doc, participantID: `${doc.participantID}#${i}`, id: row!.id });
  }

  const responseDocs = sample(
    fc.record({
      participantID: word,
      key: word,
      versionID: word,
      openedAt: seconds,
      submittedAt: seconds,
      arrivedAt: seconds,
      context: stringMap,
    }),
    80,
  );
  for (const doc of responseDocs) {
    const [row] = await t.db
      .insert(surveyResponses)
      .values({
        studyKey: STUDY,
        participantId: doc.participantID,
        key: doc.key,
        versionId: doc.versionID,
        openedAt: doc.openedAt,
        submittedAt: doc.submittedAt,
        arrivedAt: doc.arrivedAt,
        context: doc.context,
      })
      .returning({ id: surveyResponses.id });
    docs.responses.push({ ...doc, id: row!.id });
  }

  const reportDocs = sample(
    fc.record({
      participantID: word,
      key: word,
      responseID: fc.constantFrom(null, ...RESPONSE_IDS),
      timestamp: seconds,
      data: fc.array(fc.record({ key: word, value: word }), { maxLength: 3 }),
    }),
    80,
  );
  for (const doc of reportDocs) {
    const [row] = await t.db
      .insert(reports)
      .values({
        studyKey: STUDY,
        participantId: doc.participantID,
        key: doc.key,
        responseId: doc.responseID,
        eventType: "CUSTOM",
        timestamp: doc.timestamp,
        data: doc.data,
      })
      .returning({ id: reports.id });
    docs.reports.push({ ...doc, responseID: doc.responseID ?? "", id: row!.id });
  }
  // Another study's rows with the same values: the study condition, not the filter, keeps them out.
  await t.db
    .insert(participants)
    .values({ studyKey: OTHER, participantId: "a", studyStatus: "active", enteredAt: 0, modifiedAt: 0 });
});

afterAll(async () => {
  await t.drop();
});

describe("translateCaseFilter selects what Mongo selects", () => {
  for (const target of ["participants", "responses", "reports"] as const) {
    it(`on ${target}`, async () => {
      let nonEmpty = 0;
      await fc.assert(
        fc.asyncProperty(filterOf(target), async (filter) => {
          const expected = docs[target]
            .filter((doc) => matches(doc, filter))
            .map((doc) => doc.id)
            .sort();
          if (expected.length > 0 && expected.length < docs[target].length) nonEmpty += 1;
          expect(await selectIds(target, translateCaseFilter(target, filter))).toEqual(expected);
        }),
        { numRuns: 300 },
      );
      // the generators must reach filters that split the documents, or the property says little
      expect(nonEmpty).toBeGreaterThan(50);
    });
  }

  it("undefined and {} select everything", async () => {
    expect(await selectIds("participants", translateCaseFilter("participants", undefined))).toHaveLength(80);
    expect(await selectIds("participants", translateCaseFilter("participants", {}))).toHaveLength(80);
  });

  it("binds values as parameters: a quote in a value or key is data, not SQL", async () => {
    const hostile = "x' or '1'='1";
    const query = t.db
      .select({ id: participants.id })
      .from(participants)
      .where(translateCaseFilter("participants", { studyStatus: hostile, [`flags.${hostile}`]: hostile }))
      .toSQL();
    expect(query.sql).not.toContain(hostile);
    expect(query.params).toContain(hostile);
    expect(await selectIds("participants", translateCaseFilter("participants", { studyStatus: hostile }))).toEqual([]);
  });
});

describe("translateCaseFilter refuses what it does not offer, naming it", () => {
  const refused: [CaseFilterTarget, unknown, RegExp][] = [
    ["participants", { studyStatus: { $regex: "^a" } }, /filter\.studyStatus: unsupported operator "\$regex"/],
    ["participants", { $nor: [{ studyStatus: "a" }] }, /unsupported operator "\$nor"/],
    ["participants", { $where: "1" }, /unsupported operator "\$where"/],
    ["participants", { password: "x" }, /unknown field "password"/],
    ["participants", { "flags.a.b": "x" }, /unknown field "flags\.a\.b"/],
    ["participants", { flags: "x" }, /unknown field "flags"/],
    ["responses", { studyStatus: "active" }, /unknown field "studyStatus"/],
    ["participants", { enteredAt: "1700000000" }, /filter\.enteredAt: expected whole Unix seconds/],
    ["participants", { enteredAt: 1.5 }, /filter\.enteredAt: expected whole Unix seconds/],
    ["participants", { studyStatus: 3 }, /filter\.studyStatus: expected a string/],
    ["participants", { studyStatus: { a: 1 } }, /filter\.studyStatus: compare with/],
    ["participants", { studyStatus: { $eq: "a", b: 1 } }, /"b" cannot be mixed with operators/],
    ["participants", { studyStatus: { $in: "a" } }, /filter\.studyStatus: expected an array/],
    ["participants", { studyStatus: { $gt: null } }, /expected a string/],
    ["participants", { studyStatus: { $exists: true } }, /\$exists is offered on map entries/],
    ["participants", { $or: [] }, /filter\.\$or: expected a non-empty array/],
    ["participants", { $and: {} }, /filter\.\$and: expected a non-empty array/],
    ["participants", { $or: ["x"] }, /filter\.\$or\.0: expected an object/],
    ["participants", [], /filter: expected an object/],
    ["participants", "x", /filter: expected an object/],
    ["reports", { "data.value": { $gt: "a" } }, /\$gt is not offered on data\.value/],
    ["reports", { "data.other": "a" }, /unknown field "data\.other"/],
    ["participants", { studyStatus: { $in: Array.from({ length: 1001 }, () => "a") } }, /at most 1000 values/],
  ];
  for (const [target, filter, message] of refused) {
    it(`${JSON.stringify(filter).slice(0, 60)} on ${target}`, () => {
      expect(() => translateCaseFilter(target, filter)).toThrow(Invalid);
      expect(() => translateCaseFilter(target, filter)).toThrow(message);
    });
  }

  it("bounds nesting", () => {
    let deep: Record<string, unknown> = { studyStatus: "a" };
    for (let i = 0; i < 10; i++) deep = { $and: [deep] };
    expect(() => translateCaseFilter("participants", deep)).toThrow(/nested deeper than 8/);
  });
});

describe("translateCaseSort", () => {
  it("keeps the JSON's order and maps 1/-1", () => {
    expect(translateCaseSort("participants", { enteredAt: -1, participantID: 1 })).toEqual([
      { field: "enteredAt", column: "entered_at", direction: "desc" },
      { field: "participantID", column: "participant_id", direction: "asc" },
    ]);
    expect(translateCaseSort("responses", undefined)).toEqual([]);
    expect(translateCaseSort("responses", {})).toEqual([]);
  });
  it("refuses unsortable fields and other directions", () => {
    expect(() => translateCaseSort("participants", { flags: 1 })).toThrow(/sort: cannot sort on "flags"/);
    expect(() => translateCaseSort("participants", { "flags.a": 1 })).toThrow(/cannot sort on "flags\.a"/);
    expect(() => translateCaseSort("participants", { enteredAt: "asc" })).toThrow(/sort\.enteredAt: expected 1 or -1/);
    expect(() => translateCaseSort("participants", [])).toThrow(/sort: expected an object/);
    expect(() => translateCaseSort("reports", { responseID: 1 })).toThrow(Invalid);
  });
});

describe("parseCaseJsonParam", () => {
  it("parses JSON, once- or twice-encoded, and names the parameter when it is not JSON", () => {
    expect(parseCaseJsonParam("filter", undefined)).toBeUndefined();
    expect(parseCaseJsonParam("filter", "")).toBeUndefined();
    expect(parseCaseJsonParam("filter", '{"a":1}')).toEqual({ a: 1 });
    expect(parseCaseJsonParam("filter", encodeURIComponent('{"a":"b c"}'))).toEqual({ a: "b c" });
    expect(() => parseCaseJsonParam("filter", "{a:1}")).toThrow("filter: not valid JSON");
    expect(() => parseCaseJsonParam("sort", "%E0%A4%A")).toThrow(/sort: not valid/);
    expect(() => parseCaseJsonParam("filter", "x".repeat(20_000))).toThrow(/filter: longer than/);
  });
  it("runs a parsed filter", async () => {
    const filter = parseCaseJsonParam("filter", JSON.stringify({ studyStatus: { $in: ["active"] } }));
    const ids = await selectIds("participants", translateCaseFilter("participants", filter));
    expect(ids).toEqual(
      docs.participants
        .filter((d) => d.studyStatus === "active")
        .map((d) => d.id)
        .sort(),
    );
  });
});

// keep the sql import used for ad-hoc debugging of a failing case
void sql;
