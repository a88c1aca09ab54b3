/**
 * Exports of data imported from CASE: the same dump imported into two fresh databases gives the
 * same response export byte for byte (CSV and JSON, through `export:responses` and the workers),
 * and the export says what the dump's responses say.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCaseDump } from "@studyflow/domain/case-import";
import { createTestDatabase, testRedisUrl, uniqueQueuePrefix, type TestDatabase } from "@studyflow/testkit";
import { startWorkerBesideApi } from "@studyflow/worker/testing";
import {
  caseParticipant,
  caseResponse,
  caseStudy,
  caseSurvey,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { runCommandLine } from "./run-command-line";

const T0 = 1_700_000_000;
const RESPONSES = 40;
const localised = (text: string) => [{ code: "en", parts: [{ dtype: "str", str: text }] }];

/** types.Survey with a single choice question, as case-editor-tools write one. */
const intake = {
  ...caseSurvey("intake", "v-2023-11", T0 - 86_400),
  surveyDefinition: {
    key: "intake",
    items: [
      {
        key: "intake.Q1",
        components: {
          role: "root",
          items: [
            { role: "title", content: localised("Did you find a tick?") },
            {
              role: "responseGroup",
              key: "rg",
              items: [
                {
                  role: "singleChoiceGroup",
                  key: "scg",
                  items: [
                    { role: "option", key: "yes", content: localised("Yes") },
                    { role: "option", key: "no", content: localised("No") },
                  ],
                },
              ],
            },
          ],
        },
      },
    ],
  },
};

const participantIdOf = (i: number) => `case-participant-${String(i % 10).padStart(2, "0")}`;
const responses = Array.from({ length: RESPONSES }, (_, i) =>
  caseResponse(participantIdOf(i), "intake", "v-2023-11", T0 + i * 3_600, { value: i % 3 === 0 ? "yes" : "no" }),
);

/** RFC 4180 rows: quoted cells may hold commas, quotes (doubled) and line breaks. */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  const endCell = () => {
    row.push(cell);
    cell = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") endCell();
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endCell();
      rows.push(row);
      row = [];
    } else cell += c;
  }
  if (cell !== "" || row.length > 0) {
    endCell();
    rows.push(row);
  }
  return rows;
}

/** The UUID studyflow keeps a CASE ObjectId under (docs/migrate-from-case.md): `00000000-` and the id's hex. */
const uuidOf = (objectIdHex: string) =>
  `00000000-${objectIdHex.slice(0, 4)}-${objectIdHex.slice(4, 8)}-${objectIdHex.slice(8, 12)}-${objectIdHex.slice(12)}`;

interface Side {
  database: TestDatabase;
  prefix: string;
  worker: { stop: () => Promise<void> };
}

describe("exports of responses imported from CASE", () => {
  let dir: string;
  let a: Side;
  let b: Side;

  const side = async (): Promise<Side> => {
    const database = await createTestDatabase();
    const summary = await importCaseDump(
      database.db,
      { dumpDir: join(dir, "dump"), instance: "nl", dbPrefix: "", only: ["studies"], dryRun: false, replace: false },
      {},
      { clock: Date.now },
    );
    expect(summary.problems).toBe(0);
    const prefix = uniqueQueuePrefix();
    const worker = startWorkerBesideApi({ database, config: { QUEUE_PREFIX: prefix } }, join(dir, prefix));
    return { database, prefix, worker };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "import-case-export-"));
    await writeCaseDump(join(dir, "dump"), {
      instance: "nl",
      gzip: true,
      databases: {
        studyDB: {
          "study-infos": [caseStudy("ticks")],
          ticks_surveys: [intake],
          ticks_participants: Array.from({ length: 10 }, (_, i) => caseParticipant(participantIdOf(i))),
          ticks_surveyResponses: responses,
        },
      },
    });
    a = await side();
    b = await side();
  });
  afterAll(async () => {
    for (const s of [a, b]) {
      await s?.worker.stop();
      await s?.database.drop();
    }
    await rm(dir, { recursive: true, force: true });
  });

  const exported = async (s: Side, name: string, format: string) => {
    const out = join(dir, name);
    const result = await runCommandLine(
      s.database,
      ["export:responses", "--study", "ticks", "--survey", "intake", "--format", format, "--out", out, "--json"],
      dir,
      { env: { REDIS_URL: testRedisUrl, QUEUE_PREFIX: s.prefix } },
    );
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    return await readFile(out);
  };

  it("the CSV export of the imported responses equals the export of the same dump imported anew", async () => {
    const fromA = await exported(a, "a.csv", "wide");
    const fromB = await exported(b, "b.csv", "wide");
    expect(fromA.equals(fromB)).toBe(true);

    const [header, ...rows] = csvRows(fromA.toString("utf8"));
    expect(rows).toHaveLength(RESPONSES);
    const column = (name: string) => {
      const at = header!.indexOf(name);
      expect(at, `column ${name} in ${header!.join(",")}`).toBeGreaterThanOrEqual(0);
      return at;
    };
    // cells checked against the dump's documents
    for (const i of [0, 1, 17, RESPONSES - 1]) {
      const document = responses[i]!;
      const row = rows.find((cells) => cells[column("ID")] === uuidOf(document._id.toHexString()));
      expect(row, `response ${i}`).toBeDefined();
      expect(row![column("participantID")]).toBe(participantIdOf(i));
      expect(row![column("version")]).toBe("v-2023-11");
      expect(row![column("intake.Q1")]).toBe(i % 3 === 0 ? "yes" : "no");
      // caseResponse: opened a minute before, arrived a second after the submission
      expect(row![column("opened")]).toBe(String(T0 + i * 3_600 - 60));
      expect(row![column("submitted")]).toBe(String(T0 + i * 3_600));
      expect(row![column("arrived")]).toBe(String(T0 + i * 3_600 + 1));
    }
  });

  it("the JSON export too, and it holds the dump's response items", async () => {
    const fromA = await exported(a, "a.json", "json");
    const fromB = await exported(b, "b.json", "json");
    expect(fromA.equals(fromB)).toBe(true);
    const text = fromA.toString("utf8");
    const inFile = (JSON.parse(text) as { responses: Record<string, unknown>[] }).responses;
    expect(inFile).toHaveLength(RESPONSES);
    for (const i of [2, 3, 30]) {
      const row = inFile.find((entry) => entry["ID"] === uuidOf(responses[i]!._id.toHexString()));
      expect(row, `response ${i}`).toMatchObject({
        participantID: participantIdOf(i),
        version: "v-2023-11",
        submitted: T0 + i * 3_600,
        "intake.Q1": i % 3 === 0 ? "yes" : "no",
      });
    }
  });
});
