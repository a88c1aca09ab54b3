// Response exports read each response's answers from the JSON text PostgreSQL writes for the jsonb
// (not from a document the driver parsed): the files must be byte for byte what the parsed documents
// give, for every format, with and without meta columns, and count the same mismatches, however odd
// the stored documents are.
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResponseFormatter, type ExportResponse, type IncludeMeta } from "@studyflow/case-export";
import { surveyVersions, type ResponseExportInput } from "@studyflow/db";
import { createResponseExportTask, exportMismatches, openTaskFile } from "@studyflow/domain/exports";
import { createFileStore, type FileStore } from "@studyflow/domain/files";
import { systemClock } from "@studyflow/domain/foundation";
import { createStudy } from "@studyflow/domain/study-setup";
import { publishSurveyVersion } from "@studyflow/domain/surveys";
import { finalizeIfComplete, planTask, processChunk } from "@studyflow/domain/task-pipeline";
import { createTestDatabase, readOpenedFile, type TestDatabase } from "@studyflow/testkit";

const NOW_MS = Date.UTC(2031, 4, 1);
const STUDY = "texts";
const NO_META: IncludeMeta = { position: false, initTimes: false, displayedTimes: false, responsedTimes: false };
const ALL_META: IncludeMeta = { position: true, initTimes: true, displayedTimes: true, responsedTimes: true };

const content = (en: string) => [{ code: "en", parts: [{ str: en, dtype: "str" }] }];
const comp = (role: string, key: string, items?: unknown[]) => (items ? { role, key, items } : { role, key });
const option = (key: string) => ({ role: "option", key, content: content(key) });
const question = (key: string, responseComponents: unknown[]) => ({
  key,
  components: {
    role: "root",
    items: [
      { role: "title", content: content(key) },
      { key: "rg", role: "responseGroup", items: responseComponents },
    ],
  },
});

/** One question of each kind family the formatter tells apart. */
const survey = {
  props: { name: content("mixed") },
  surveyDefinition: {
    key: "mixed",
    items: [
      question("mixed.single", [
        comp("singleChoiceGroup", "scg", [
          option("a"),
          { role: "input", key: "other", content: content("Other") },
          comp("cloze", "cl", [comp("input", "txt"), comp("dropDownGroup", "dd", [option("x"), option("y")])]),
        ]),
      ]),
      question("mixed.multi", [
        comp("multipleChoiceGroup", "mcg", [option("1"), option("2"), { role: "input", key: "3" }]),
      ]),
      question("mixed.num", [comp("numberInput", "num")]),
      question("mixed.matrix", [
        comp("matrix", "mat", [
          comp("responseRow", "r1", [comp("dropDownGroup", "dd", [option("1"), option("2")]), comp("input", "in")]),
          comp("radioRow", "r2", [option("o1"), option("o2")]),
        ]),
      ]),
      question("mixed.array", [
        comp("responsiveSingleChoiceArray", "rsca", [
          comp("options", "options", [option("1"), option("2")]),
          comp("row", "row1"),
          comp("row", "row2"),
        ]),
      ]),
      question("mixed.consent", [comp("consent", "consent")]),
      question("mixed.widget", [comp("customWidget:v1", "w")]),
    ],
  },
};

const meta = (position: number) =>
  `"meta": {"position": ${position}, "localeCode": "en", "rendered": [1700000000], "displayed": [1700000001], "responded": [1700000009]}`;

/** Stored documents as JSON text, from the usual to the odd; PostgreSQL normalises each into jsonb. */
const DOCUMENTS = [
  // a full, ordinary submission
  `[{"key": "mixed.single", ${meta(0)}, "response": {"key": "rg", "items": [{"key": "scg", "items": [{"key": "other", "value": "my words"}]}]}},
    {"key": "mixed.multi", ${meta(1)}, "response": {"key": "rg", "items": [{"key": "mcg", "items": [{"key": "1"}, {"key": "3", "value": "open, text"}]}]}},
    {"key": "mixed.num", ${meta(2)}, "response": {"key": "rg", "items": [{"key": "num", "dtype": "number", "value": "38.5"}]}},
    {"key": "mixed.matrix", ${meta(3)}, "response": {"key": "rg", "items": [{"key": "mat", "items": [{"key": "r1", "items": [{"key": "dd", "items": [{"key": "2"}]}, {"key": "in", "value": "cell"}]}, {"key": "r2", "items": [{"key": "o1"}]}]}]}},
    {"key": "mixed.array", ${meta(4)}, "response": {"key": "rg", "items": [{"key": "rsca", "items": [{"key": "row1", "items": [{"key": "2"}]}]}]}},
    {"key": "mixed.consent", ${meta(5)}, "response": {"key": "rg", "items": [{"key": "consent", "value": "true"}]}},
    {"key": "mixed.widget", ${meta(6)}, "response": {"key": "rg", "items": [{"key": "w", "value": "v", "items": [{"key": "deep", "value": "<&>"}]}]}}]`,
  // escapes, controls, non-ASCII, astral characters, separators and formulas in values
  `[{"key": "mixed.single", "response": {"key": "rg", "items": [{"key": "scg", "items": [{"key": "cl", "items": [{"key": "txt", "value": "=1+2 \\"q\\"\\n\\t\\u0001 \\u2028 ünï 😀 \\/"}, {"key": "dd", "items": [{"key": "y"}]}]}]}]}},
    {"key": "mixed.num", "response": {"key": "rg", "items": [{"key": "num", "value": "-5"}]}}]`,
  // numbers and booleans where strings belong; PostgreSQL keeps 1.0 and 1E2 as numerics
  `[{"key": "mixed.num", "meta": {"position": 2.9, "rendered": [1.5, "x", null, 1e2]}, "response": {"key": "rg", "items": [{"key": "num", "value": 1.0}]}},
    {"key": "mixed.multi", "response": {"key": "rg", "items": [{"key": "mcg", "items": [{"key": 1}, {"key": 3, "value": true}]}]}},
    {"key": "mixed.consent", "response": {"key": "rg", "items": [{"key": "consent", "value": 12345678901234567890}]}}]`,
  // a member given twice (jsonb keeps the last), junk elements, null and non-object responses
  `[{"key": "mixed.single", "key": "mixed.num", "response": {"key": "rg", "items": [{"key": "num", "value": "7"}]}},
    null, 3, "text", [], [{"key": "mixed.single"}],
    {"key": "mixed.matrix", "response": null},
    {"key": "mixed.array", "response": ["rg"]},
    {"key": "mixed.consent", "meta": "none", "response": {"key": "rg", "items": "none"}},
    {"response": {"key": "rg", "items": [{"key": "scg", "items": [{"key": "a"}]}]}}]`,
  // unknown keys (mismatches), repeated items (the first counts), members the export does not read
  `[{"key": "mixed.single", "extra": {"a": [1, {"b": "}]"}]}, "response": {"key": "rg", "items": [{"key": "scg", "items": [{"key": "zz"}]}]}},
    {"key": "mixed.single", "response": {"key": "rg", "items": [{"key": "scg", "items": [{"key": "a"}]}]}},
    {"key": "mixed.unknown", "response": {"key": "rg", "items": [{"key": "x", "value": "y"}]}},
    {"key": "mixed.multi", "response": {"key": "rg", "items": [{"key": "mcg", "items": [{"key": "2", "items": [{"key": "deeper", "value": "v"}]}]}]}}]`,
  // nothing answered, and a document that is a JSON null
  `[]`,
  `null`,
];

describe("response exports read from the answers' JSON text", () => {
  let database: TestDatabase;
  let store: FileStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createFileStore(database.db);
    await createStudy(database.db, { key: STUDY });
    await publishSurveyVersion(database.db, { studyKey: STUDY, actor: "test", survey }, { clock: () => NOW_MS });
    const [version] = await database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, STUDY));
    // every document three times: answering the uploaded version, naming no version, naming an unknown one
    const rows = DOCUMENTS.flatMap((document, i) =>
      [version!.versionId, "", "v-unknown"].map(
        (versionId, j) =>
          sql`(${STUDY}, ${`p${i}`}, 'mixed', ${versionId}, ${1_000 + i}, ${2_000 + i}, ${3_000 + i * 3 + j},
            ${document}::jsonb, ${`{"language": "en", "session": "s${i}"}`}::jsonb)`,
      ),
    );
    await database.db.execute(sql`
      insert into survey_responses (study_key, participant_id, key, version_id, opened_at, submitted_at, arrived_at,
        responses, context)
      values ${sql.join(rows, sql`, `)}`);
  });
  afterAll(async () => {
    await database.drop();
  });

  /** What formatting the documents as the driver parses them gives (the way exports read them before). */
  async function parsedExport(input: ResponseExportInput) {
    const versions = (await database.db.select().from(surveyVersions).where(eq(surveyVersions.studyKey, STUDY))).map(
      (row) => ({
        versionId: row.versionId,
        publishedAt: Math.floor(row.publishedAt.getTime() / 1000),
        unpublishedAt: null,
        definition: row.definition,
      }),
    );
    const rows = await database.db.execute<Record<string, unknown>>(sql`
      select id, participant_id, key, version_id, opened_at, submitted_at, arrived_at, responses, context
      from survey_responses where study_key = ${STUDY} order by arrived_at, id`);
    const formatter = createResponseFormatter("mixed", versions, {
      format: input.format,
      questionOptionSep: input.questionOptionSep,
      shortKeys: input.shortKeys,
      extraContextColumns: input.extraContextColumns,
      includeMeta: input.includeMeta as unknown as IncludeMeta,
      accountColumns: false,
      now: input.now,
      guardFormulas: input.guardFormulas === true,
    });
    const exportRows: ExportResponse[] = rows.map((row) => ({
      id: String(row["id"]),
      participantId: String(row["participant_id"]),
      key: String(row["key"]),
      versionId: String(row["version_id"]),
      openedAt: Number(row["opened_at"]),
      submittedAt: Number(row["submitted_at"]),
      arrivedAt: Number(row["arrived_at"]),
      // the driver parses jsonb; a JSON null read as no responses
      responses: (row["responses"] as unknown[] | null) ?? [],
      context: row["context"] as Record<string, string>,
      account: { accountId: null, mainProfile: null },
    }));
    const batch = formatter.format(exportRows, false);
    return {
      text: formatter.start() + batch.text + formatter.end(exportRows.length > 0),
      mismatches: batch.mismatches,
    };
  }

  for (const format of ["wide", "long", "json"] as const) {
    for (const [label, includeMeta] of [
      ["without", NO_META],
      ["with", ALL_META],
    ] as const) {
      it(`writes the ${format} file ${label} meta columns as the parsed documents give it`, async () => {
        const created = await createResponseExportTask(
          database.db,
          STUDY,
          {
            surveyKey: "mixed",
            format,
            questionOptionSep: "-",
            shortKeys: format === "long",
            extraContextColumns: [],
            includeMeta,
            gzip: false,
          },
          "researcher",
          { clock: systemClock },
        );
        const planned = await planTask(database.db, created.id, { clock: systemClock, chunkSize: 8, files: store });
        if (planned.status !== "planned") throw new Error(`not planned: ${planned.status}`);
        for (const { chunkIndex } of planned.chunks) {
          const outcome = await processChunk(database.db, created.id, chunkIndex, {
            clock: () => NOW_MS,
            batchSize: 3,
            files: store,
          });
          expect(outcome).toBe("done");
        }
        expect(await finalizeIfComplete(database.db, created.id, "/tmp", () => NOW_MS, store)).toBe("completed");
        const task = { ...created, status: "completed" as const };
        const file = await openTaskFile(database.db, store, task);
        const expected = await parsedExport(created.input as ResponseExportInput);
        expect((await readOpenedFile(file)).toString("utf8")).toBe(expected.text);
        expect(expected.mismatches).toBeGreaterThan(0);
        expect(await exportMismatches(database.db, created.id)).toBe(expected.mismatches);
      });
    }
  }
});
