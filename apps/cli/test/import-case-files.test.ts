/**
 * `import:case --files-dir`: participant files come with their bytes from case-backend's file
 * folder, and a researcher fetches an imported file with `participant-files:get` byte for byte;
 * without the flag each file is in the report as carried without its bytes.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseAccountUuid } from "@studyflow/domain/case-import";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseParticipant,
  caseParticipantFile,
  caseStudy,
  writeCaseDump,
} from "../../../packages/domain/test/case-import/case-dump";
import { runCommandLine } from "./run-command-line";

const PDF = Buffer.from("%PDF-1.4\nan imported consent form\n%%EOF\n");

describe("import:case --files-dir", () => {
  let database: TestDatabase;
  let dir: string;
  const file = caseParticipantFile("nl", "ticks", "p-1", { fileType: "application/pdf", size: PDF.length });

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "import-case-files-"));
    await writeCaseDump(join(dir, "dump"), {
      instance: "nl",
      databases: {
        studyDB: {
          "study-infos": [caseStudy("ticks")],
          ticks_participants: [caseParticipant("p-1")],
          ticks_participantFiles: [file],
        },
      },
    });
    await mkdir(join(dir, "files", "nl", "ticks"), { recursive: true });
    await writeFile(join(dir, "files", file.path), PDF);
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const importCase = (...more: string[]) =>
    runCommandLine(
      database,
      ["import:case", "--dump", "dump", "--instance", "nl", "--only", "studies", "--report", "report.jsonl", ...more],
      dir,
    );

  it("without --files-dir, reports each file as carried without its bytes", async () => {
    const result = await importCase("--dry-run");
    expect(result.exitCode).toBe(1);
    const report = (await readFile(join(dir, "report.jsonl"), "utf8")).trim().split("\n");
    expect(report.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        database: "nl_studyDB",
        collection: "ticks_participantFiles",
        id: file._id.toHexString(),
        reason: "bytes not carried (no --files-dir)",
      },
    ]);
  });

  it("with --files-dir the bytes come along, and a researcher fetches the same bytes", async () => {
    const imported = await importCase("--files-dir", "files");
    expect(imported.exitCode).toBe(0);
    const fetched = await runCommandLine(
      database,
      [
        "participant-files:get",
        "--study",
        "ticks",
        "--file",
        caseAccountUuid(file._id.toHexString()),
        "--out",
        "fetched.pdf",
      ],
      dir,
    );
    expect(fetched.exitCode).toBe(0);
    expect((await readFile(join(dir, "fetched.pdf"))).equals(PDF)).toBe(true);
    const again = await importCase("--files-dir", "files", "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: 0, problems: 0 });
  });

  it("refuses a --files-dir that does not exist", async () => {
    const result = await importCase("--files-dir", "no-such-folder");
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("does not exist");
  });
});
