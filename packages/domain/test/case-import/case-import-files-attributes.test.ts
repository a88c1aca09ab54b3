/**
 * Participant files (metadata, and bytes from case-backend's file folder), researcher messages and
 * user attributes, from a dump shaped as case-backend writes them (case-dump.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { participantFiles, researcherMessages, storedFiles, userAttributes } from "@studyflow/db";
import { caseAccountUuid, type CaseImportOptions } from "@studyflow/domain/case-import";
import { createPostgresFileStore, type FileStore } from "@studyflow/domain/files";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import {
  caseBackendHash,
  caseParticipant,
  caseParticipantFile,
  caseResearcherMessage,
  caseStudy,
  caseUser,
  caseUserAttributes,
  writeCaseDump,
  runCaseImport,
} from "./case-dump";

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from("an imported picture"),
]);

async function readAll(store: FileStore, row: typeof storedFiles.$inferSelect): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of store.read(row)) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe("importing participant files, researcher messages and user attributes", () => {
  let database: TestDatabase;
  let store: FileStore;
  let dir: string;
  const kept = caseParticipantFile("tr", "flu", "pid-1", { size: PNG.length });
  const missing = caseParticipantFile("tr", "flu", "pid-1", { fileType: "application/pdf", size: 10 });
  const unfinished = caseParticipantFile("tr", "flu", "pid-1", { status: "uploading", path: "" });
  const message = caseResearcherMessage("needs-call", "pid-1", { reason: "fever" });
  const account = caseUser("ann@example.org", caseBackendHash("a long enough password"), [new ObjectId()]);
  const attributes = caseUserAttributes(account._id, "onboarding", { step: 3, done: false });
  const stranger = caseUserAttributes(new ObjectId(), "onboarding", null);
  const filesDir = () => join(dir, "files");

  const options = (over: Partial<CaseImportOptions> = {}): CaseImportOptions => ({
    dumpDir: join(dir, "dump"),
    instance: "tr",
    dbPrefix: "",
    only: ["studies", "users"],
    dryRun: false,
    replace: false,
    ...over,
  });

  const run = (over: Partial<CaseImportOptions> = {}) => runCaseImport(database.db, options(over));
  const collection = (summary: Awaited<ReturnType<typeof run>>["summary"], name: string) =>
    summary.collections.find((c) => c.collection === name);

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresFileStore(database.db);
    dir = await mkdtemp(join(tmpdir(), "case-import-files-"));
    await writeCaseDump(join(dir, "dump"), {
      instance: "tr",
      databases: {
        studyDB: {
          "study-infos": [caseStudy("flu")],
          flu_participants: [caseParticipant("pid-1")],
          flu_participantFiles: [kept, missing, unfinished],
          flu_researcherMessages: [message],
        },
        users: { users: [account], userAttributes: [attributes, stranger] },
      },
    });
    await mkdir(join(filesDir(), "tr", "flu"), { recursive: true });
    await writeFile(join(filesDir(), kept.path), PNG);
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a dry run writes nothing, and says which bytes it could not find", async () => {
    const { summary, problems } = await run({ dryRun: true, filesDir: filesDir(), fileStore: store });
    expect(collection(summary, "flu_participantFiles")).toMatchObject({ inserted: 2, skipped: 1 });
    expect(problems).toContainEqual(
      expect.objectContaining({
        id: missing._id.toHexString(),
        reason: `bytes not carried: ${missing.path} is not in --files-dir`,
      }),
    );
    expect(await database.db.select().from(participantFiles)).toEqual([]);
    expect(await database.db.select().from(researcherMessages)).toEqual([]);
    expect(await database.db.select().from(userAttributes)).toEqual([]);
  });

  it("without --files-dir the metadata comes in and each file is reported without its bytes", async () => {
    const { problems } = await run();
    const rows = await database.db.select().from(participantFiles);
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.id === caseAccountUuid(kept._id.toHexString()))).toMatchObject({
      studyKey: "flu",
      participantId: "pid-1",
      fileType: "image/png",
      size: PNG.length,
      status: "ready",
      storedFileId: null,
      createdAt: new Date("2024-06-01T08:00:00Z"),
    });
    const fileProblems = problems.filter((p) => p.collection === "flu_participantFiles");
    expect(fileProblems.map((p) => [p.id, p.reason]).sort()).toEqual(
      [
        [kept._id.toHexString(), "bytes not carried (no --files-dir)"],
        [missing._id.toHexString(), "bytes not carried (no --files-dir)"],
        [unfinished._id.toHexString(), 'the upload never finished in CASE (status "uploading")'],
      ].sort(),
    );
  });

  it("with --files-dir the bytes come along, the same bytes; a file missing on disk is reported", async () => {
    const { summary, problems } = await run({ filesDir: filesDir(), fileStore: store });
    expect(collection(summary, "flu_participantFiles")).toMatchObject({ updated: 1, unchanged: 1, skipped: 1 });
    expect(problems).toContainEqual(
      expect.objectContaining({
        id: missing._id.toHexString(),
        reason: `bytes not carried: ${missing.path} is not in --files-dir`,
      }),
    );
    const [row] = await database.db
      .select()
      .from(participantFiles)
      .where(eq(participantFiles.id, caseAccountUuid(kept._id.toHexString())));
    const [stored] = await database.db.select().from(storedFiles).where(eq(storedFiles.id, row!.storedFileId!));
    expect(stored).toMatchObject({ studyKey: "flu", contentType: "image/png", complete: true });
    expect((await readAll(store, stored!)).equals(PNG)).toBe(true);
  });

  it("carries researcher messages undelivered, and user attributes under the imported account", async () => {
    expect(await database.db.select().from(researcherMessages)).toEqual([
      {
        id: expect.any(Number),
        studyKey: "flu",
        participantId: "pid-1",
        type: "needs-call",
        payload: { reason: "fever" },
        createdAt: message._id.getTimestamp(),
        deliveredAt: null,
      },
    ]);
    expect(await database.db.select().from(userAttributes)).toEqual([
      {
        id: attributes._id.toHexString(),
        userId: caseAccountUuid(account._id.toHexString()),
        type: "onboarding",
        attributes: { step: 3, done: false },
        createdAt: new Date("2024-07-01T12:00:00Z"),
      },
    ]);
  });

  it("reports attributes of an account that was not imported", async () => {
    const { problems } = await run({ filesDir: filesDir(), fileStore: store });
    expect(problems).toContainEqual(
      expect.objectContaining({
        collection: "userAttributes",
        id: stranger._id.toHexString(),
        reason: `account ${stranger.userId.toHexString()} was not imported`,
      }),
    );
  });

  it("a rerun changes nothing, with or without --files-dir", async () => {
    expect((await run({ filesDir: filesDir(), fileStore: store })).summary.changed).toBe(0);
    expect((await run()).summary.changed).toBe(0);
    expect(await database.db.select().from(researcherMessages)).toHaveLength(1);
    expect(await database.db.select().from(storedFiles)).toHaveLength(1);
  });
});
