import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Long, ObjectId, serialize } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DumpFileDamaged,
  deserializeCaseDocument,
  findDumpCollection,
  listDumpCollections,
  readDumpDocuments,
  toPlain,
} from "@studyflow/domain/case-import";

describe("reading a mongodump collection as a stream", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "case-dump-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const documents = Array.from({ length: 300 }, (_, i) => ({
    _id: new ObjectId(),
    participantID: `p${i}`,
    enteredAt: Long.fromNumber(1_700_000_000 + i),
    // every 50th document larger than the reader's 1 MiB chunks, so documents span chunks
    blob: i % 50 === 0 ? "x".repeat(1_500_000) : "",
  }));
  const bytes = Buffer.concat(documents.map((doc) => Buffer.from(serialize(doc))));

  async function readAll(database: string, collection: string) {
    const file = await findDumpCollection(dir, database, collection);
    if (!file) throw new Error("no file");
    const read: { index: number; id: string; enteredAt: unknown }[] = [];
    for await (const { index, bytes: raw } of readDumpDocuments(file)) {
      const doc = deserializeCaseDocument(raw);
      read.push({ index, id: toPlain(doc["_id"]) as string, enteredAt: doc["enteredAt"] });
    }
    return { file, read };
  }

  it("reads every document of a plain and of a gzip file, in order, int64 times as numbers", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, "i_studyDB"), { recursive: true });
    await writeFile(join(dir, "i_studyDB", "plain.bson"), bytes);
    await writeFile(join(dir, "i_studyDB", "zipped.bson.gz"), gzipSync(bytes));
    expect(await listDumpCollections(dir, "i_studyDB")).toEqual(["plain", "zipped"]);
    for (const name of ["plain", "zipped"]) {
      const { file, read } = await readAll("i_studyDB", name);
      expect(file.gzip).toBe(name === "zipped");
      expect(read.map((entry) => entry.index)).toEqual(documents.map((_, i) => i));
      expect(read.map((entry) => entry.id)).toEqual(documents.map((doc) => doc._id.toHexString()));
      expect(read[299]!.enteredAt).toBe(1_700_000_299);
    }
  });

  it("an empty collection has no documents; a missing one is undefined", async () => {
    await writeFile(join(dir, "i_studyDB", "empty.bson"), Buffer.alloc(0));
    expect((await readAll("i_studyDB", "empty")).read).toEqual([]);
    expect(await findDumpCollection(dir, "i_studyDB", "absent")).toBeUndefined();
  });

  it("a file cut inside a document yields the documents before it, then says it is damaged", async () => {
    await writeFile(join(dir, "i_studyDB", "cut.bson"), bytes.subarray(0, bytes.length - 10));
    const file = (await findDumpCollection(dir, "i_studyDB", "cut"))!;
    let count = 0;
    const reading = (async () => {
      for await (const _ of readDumpDocuments(file)) count += 1;
    })();
    await expect(reading).rejects.toBeInstanceOf(DumpFileDamaged);
    expect(count).toBe(299);
  });
});
