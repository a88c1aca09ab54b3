// The PostgreSQL file store moves a part's bytes with binary COPY both ways: what is written reads
// back byte for byte in part order, whatever the bytes; a retried part replaces its own; a refused
// COPY fails the write; and a download that stops early, or is never read, leaves no connection
// behind in the pool.
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DbHandle } from "@studyflow/db";
import { createPostgresFileStore, type FileStore, type StoredFileRow } from "@studyflow/domain/files";
import { createStudy } from "@studyflow/domain/study-setup";
import { createTestDatabase, gunzipOneMember, type TestDatabase } from "@studyflow/testkit";
import { BinaryCopyColumnReader, encodeBinaryCopy } from "../src/files/postgres-binary-copy";
import { READ_GROUP_BYTES, groupParts, wholeParts } from "../src/files/postgres-file-store";

const STUDY = "files";

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Settles with the promise, or rejects after `ms`: a hang must fail the test, not stall it. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle in ${ms} ms`)), ms);
  });
  // the timer goes with the promise, so that it does not outlive the test
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("the PostgreSQL file store", () => {
  let database: TestDatabase;
  let store: FileStore;
  /** A pool of one connection: a connection the store fails to give back shows as a hang. */
  let single: DbHandle;
  let singleStore: FileStore;

  const newFile = (gzip = false) =>
    database.db.transaction((tx) =>
      store.create(tx, { studyKey: STUDY, name: "f.csv", contentType: "text/csv", gzip }),
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresFileStore(database.db);
    single = createDb(database.url, { max: 1, applicationName: "file-store-single" });
    singleStore = createPostgresFileStore(single.db);
    await createStudy(database.db, { key: STUDY });
  });
  afterAll(async () => {
    await single?.close(1);
    await database?.drop();
  });

  it("reads back what was written, byte for byte, in part order whatever the order of the writes", async () => {
    const file = await newFile();
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const large = randomBytes(3 * 1024 * 1024 + 17);
    const parts: { key: { chunkIndex: number; seq: number }; data: string | Uint8Array }[] = [
      { key: { chunkIndex: 1, seq: 0 }, data: large },
      { key: { chunkIndex: 2_147_483_647, seq: 0 }, data: "" },
      { key: { chunkIndex: 0, seq: 1000 }, data: "zwei,Grüße,😀\r\n" },
      { key: { chunkIndex: -1, seq: 0 }, data: "header\n" },
      { key: { chunkIndex: 0, seq: 0 }, data: everyByte },
      { key: { chunkIndex: 1, seq: 5_000_000_000 }, data: new Uint8Array(0) },
    ];
    await database.db.transaction(async (tx) => {
      for (const part of parts) await store.writePart(tx, file, part.key, part.data, { rows: 1 });
    });
    const completed = await database.db.transaction((tx) => store.complete(tx, file.id, 6));
    const expected = Buffer.concat([Buffer.from("header\n"), everyByte, Buffer.from("zwei,Grüße,😀\r\n"), large]);
    expect(completed.size).toBe(expected.length);
    const read = await readAll(store.read(completed));
    expect(read.equals(expected)).toBe(true);
    // stored as the bytes themselves, not as their text
    const [stored] = await database.db.execute<{ md5: string }>(
      sql`select md5(data) as md5 from stored_file_parts where file_id = ${file.id} and chunk_index = 0 and seq = 0`,
    );
    expect(stored?.md5).toBe("e2c865db4162bed963bfaa9ef6ac18f0");
  });

  it("compresses a text part with lz4 (migration 0031), reads it back whole and sizes the file by the bytes written", async () => {
    const file = await newFile();
    // long-shaped CSV: each response's fixed columns repeated on every line of its answers
    const lines: string[] = [];
    for (let row = 0; lines.length < 40_000; row++)
      for (let item = 0; item < 32; item++)
        lines.push(
          `P${row % 997},weekly,2026-11-${(row % 28) + 1},v${row % 2},Q${item},${(row * item) % 7},text ${row}\r\n`,
        );
    const text = lines.join("");
    const noise = randomBytes(2 * 1024 * 1024);
    await database.db.transaction(async (tx) => {
      await store.writePart(tx, file, { chunkIndex: 0, seq: 0 }, text, { rows: 40_000 });
      await store.writePart(tx, file, { chunkIndex: 0, seq: 40_000 }, noise, { rows: 1 });
    });
    const completed = await database.db.transaction((tx) => store.complete(tx, file.id, 40_001));
    const expected = Buffer.concat([Buffer.from(text), noise]);
    expect(completed.size).toBe(expected.length);
    expect((await readAll(store.read(completed))).equals(expected)).toBe(true);
    const stored = await database.db.execute<{ compression: string | null; stored: number; bytes: number }>(
      sql`select pg_column_compression(data) as compression, pg_column_size(data) as stored, octet_length(data) as bytes
          from stored_file_parts where file_id = ${file.id} order by seq`,
    );
    const [csv, random] = stored;
    expect(csv?.compression).toBe("lz4");
    expect(csv!.stored).toBeLessThan(csv!.bytes / 3);
    // bytes that do not compress (a gzip part) are kept as they are
    expect(random?.compression).toBeNull();
    expect(random?.bytes).toBe(noise.length);
  });

  it("reads a gzip file of many parts as one gzip member, sized as it reads", async () => {
    const file = await newFile(true);
    expect(file.gzipFraming).toBe("stream");
    const parts = ["a,b\n", "1,2\n3,4\n", "", "5,6\n".repeat(50_000), randomBytes(70_000).toString("base64")];
    await database.db.transaction(async (tx) => {
      for (const [seq, text] of parts.entries())
        await store.writePart(tx, file, { chunkIndex: 0, seq }, text, { rows: 1 });
    });
    const completed = await database.db.transaction((tx) => store.complete(tx, file.id, parts.length));
    const bytes = await readAll(store.read(completed));
    expect(completed.size).toBe(bytes.length);
    expect(gunzipOneMember(bytes).toString()).toBe(parts.join(""));
  });

  it("goes on writing gzip members for a gzip file begun before it, and reads them as they are", async () => {
    const file = await newFile(true);
    await database.db.execute(sql`update stored_files set gzip_framing = 'members' where id = ${file.id}`);
    const legacy = { ...file, gzipFraming: "members" as const };
    await database.db.transaction(async (tx) => {
      await store.writePart(tx, legacy, { chunkIndex: -1, seq: 0 }, "a,b\n", { rows: 0 });
      await store.writePart(tx, legacy, { chunkIndex: 0, seq: 0 }, "1,2\n3,4\n", { rows: 2 });
    });
    const completed = await database.db.transaction((tx) => store.complete(tx, file.id, 2));
    const bytes = await readAll(store.read(completed));
    expect(completed.size).toBe(bytes.length);
    expect(gunzipSync(bytes).toString()).toBe("a,b\n1,2\n3,4\n");
    expect(() => gunzipOneMember(bytes)).toThrow(/more than one member/);
  });

  it("replaces a part written again under its key (a retried batch), rows and separator included", async () => {
    const file = await newFile();
    const key = { chunkIndex: 3, seq: 0 };
    await database.db.transaction((tx) => store.writePart(tx, file, key, "first\n", { rows: 1, separator: true }));
    await database.db.transaction((tx) => store.writePart(tx, file, key, "second\n", { rows: 2 }));
    const rows = await database.db.execute<{ rows: number; separator: boolean; text: string }>(
      sql`select rows, separator, convert_from(data, 'UTF8') as text from stored_file_parts where file_id = ${file.id}`,
    );
    expect(rows.map((row) => ({ ...row }))).toEqual([{ rows: 2, separator: false, text: "second\n" }]);
    // given the pool rather than a transaction, it writes in a transaction of its own
    await store.writePart(database.db, file, key, "third\n", { rows: 3 });
    await store.writePart(database.db, file, { chunkIndex: 4, seq: 0 }, "fourth\n", { rows: 4 });
    const completed = await database.db.transaction((tx) => store.complete(tx, file.id, 7));
    expect((await readAll(store.read(completed))).toString()).toBe("third\nfourth\n");
  });

  it("writes nothing when the transaction rolls back, and fails a write the server refuses", async () => {
    const file = await newFile();
    await expect(
      database.db.transaction(async (tx) => {
        await store.writePart(tx, file, { chunkIndex: 0, seq: 0 }, "gone", { rows: 1 });
        throw new Error("batch failed");
      }),
    ).rejects.toThrow("batch failed");
    const missing = { ...file, id: "00000000-0000-4000-8000-000000000000" } satisfies StoredFileRow;
    await expect(
      within(
        5_000,
        single.db.transaction((tx) => singleStore.writePart(tx, missing, { chunkIndex: 0, seq: 0 }, "x", { rows: 1 })),
        "the refused write",
      ),
    ).rejects.toThrow(/foreign key/);
    // the one connection is back in the pool and usable
    await expect(within(5_000, single.sql`select 1 as one`, "the next query")).resolves.toEqual([{ one: 1 }]);
    const [count] = await database.db.execute<{ n: number }>(
      sql`select count(*)::int as n from stored_file_parts where file_id = ${file.id}`,
    );
    expect(count?.n).toBe(0);
  });

  describe("a download", () => {
    let big: StoredFileRow;
    const PARTS = 24;
    const PART = 1024 * 1024;

    beforeAll(async () => {
      const file = await newFile();
      await database.db.transaction(async (tx) => {
        for (let seq = 0; seq < PARTS; seq++)
          await store.writePart(tx, file, { chunkIndex: 0, seq }, Buffer.alloc(PART, seq), { rows: 1 });
      });
      big = await database.db.transaction((tx) => store.complete(tx, file.id, PARTS));
    });

    it("streams the parts in order at the reader's pace", async () => {
      const read = await readAll(singleStore.read(big));
      expect(read.length).toBe(PARTS * PART);
      for (let seq = 0; seq < PARTS; seq++) expect(read[seq * PART]).toBe(seq);
    });

    it("holds no connection while its reader waits, nor once stopped", async () => {
      const stream = singleStore.read(big);
      const first = await new Promise<Buffer>((resolve) => stream.once("data", resolve));
      expect(first[0]).toBe(0);
      stream.pause();
      await expect(within(5_000, single.sql`select 1 as one`, "a query beside a paused download")).resolves.toEqual([
        { one: 1 },
      ]);
      stream.destroy();
      await expect(within(5_000, single.sql`select 1 as one`, "a query after the stopped download")).resolves.toEqual([
        { one: 1 },
      ]);
    });

    it("opened and never read holds no connection", async () => {
      const stream = singleStore.read(big);
      await expect(within(5_000, single.sql`select 1 as one`, "a query beside the unread download")).resolves.toEqual([
        { one: 1 },
      ]);
      stream.destroy();
    });

    it("fails when the file's parts are removed while it is read, rather than end short", async () => {
      const file = await newFile();
      // 16 parts of 1 MB are four groups of a read: the first two are read before the removal
      await database.db.transaction(async (tx) => {
        for (let seq = 0; seq < 16; seq++)
          await store.writePart(tx, file, { chunkIndex: 0, seq }, Buffer.alloc(PART, seq), { rows: 1 });
      });
      const completed = await database.db.transaction((tx) => store.complete(tx, file.id, 16));
      const stream = store.read(completed);
      await new Promise((resolve) => stream.once("data", resolve));
      stream.pause();
      await database.db.transaction((tx) => store.removeContents(tx, completed));
      const failed = new Promise<Error>((resolve) => stream.once("error", resolve));
      stream.resume();
      expect((await within(10_000, failed, "the download's error")).message).toMatch(/lost a part of/);
    });

    it("completes or fails, and never hangs, when its connection is lost between parts", async () => {
      const stream = singleStore.read(big);
      const chunks: Buffer[] = [];
      const ended = new Promise<string>((resolve) => {
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.once("end", () => resolve("end"));
        stream.once("error", () => resolve("error"));
      });
      await new Promise((resolve) => stream.once("data", resolve));
      stream.pause();
      await database.sql`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = 'file-store-single'`;
      stream.resume();
      const outcome = await within(10_000, ended, "the download");
      if (outcome === "end") expect(Buffer.concat(chunks).length).toBe(PARTS * PART);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await expect(within(10_000, single.sql`select 1 as one`, "a query after it")).resolves.toEqual([{ one: 1 }]);
    });
  });
});

describe("a download's groups of parts", () => {
  const part = (seq: number, size: number) => ({ chunkIndex: 0, seq, size });

  it("reads consecutive small parts together, up to READ_GROUP_BYTES, in order", () => {
    const quarter = READ_GROUP_BYTES / 4;
    const parts = Array.from({ length: 9 }, (_, seq) => part(seq, quarter));
    expect(groupParts(parts).map((group) => group.map((key) => key.seq))).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8]]);
  });

  it("gives a part larger than a group a group of its own, and starts a new group after it", () => {
    const parts = [part(0, 10), part(1, READ_GROUP_BYTES + 1), part(2, 10), part(3, READ_GROUP_BYTES - 10)];
    expect(groupParts(parts).map((group) => group.map((key) => key.seq))).toEqual([[0], [1], [2, 3]]);
  });

  it("has no group for no parts", () => {
    expect(groupParts([])).toEqual([]);
  });

  it("puts parts back together from slices cut anywhere, and refuses slices that do not add up", () => {
    const parts = [Buffer.from("first part"), Buffer.from("2"), Buffer.from("the third one")];
    const all = Buffer.concat(parts);
    const sized = parts.map((part, seq) => ({ chunkIndex: 0, seq, size: part.length }));
    for (const cuts of [[], [3], [10, 11], [1, 2, 5, 10, 11, 12, 20]]) {
      const slices = [0, ...cuts].map((from, index) => all.subarray(from, [...cuts, all.length][index]));
      expect(wholeParts(slices, sized).map(String)).toEqual(parts.map(String));
    }
    expect(() => wholeParts([all.subarray(0, 5)], sized)).toThrow(/shorter/);
    expect(() => wholeParts([all, Buffer.from("x")], sized)).toThrow(/longer/);
  });
});

describe("the binary COPY framing", () => {
  const rows = [[Buffer.from("abc")], [null], [Buffer.alloc(0)], [Buffer.from([0, 255, 10])]];

  it("gives each value's bytes, however the input is split", () => {
    const input = encodeBinaryCopy(rows);
    for (let size = 1; size <= input.length; size++) {
      const reader = new BinaryCopyColumnReader();
      const out: Buffer[] = [];
      for (let at = 0; at < input.length; at += size) out.push(...reader.push(input.subarray(at, at + size)));
      reader.end();
      expect(Buffer.concat(out)).toEqual(Buffer.from([0x61, 0x62, 0x63, 0, 255, 10]));
    }
  });

  it("skips a header extension and refuses input that is cut short, not COPY, or of several columns", () => {
    const input = encodeBinaryCopy(rows);
    const extended = Buffer.concat([input.subarray(0, 15), Buffer.from([0, 0, 0, 3, 7, 7, 7]), input.subarray(19)]);
    const reader = new BinaryCopyColumnReader();
    expect(Buffer.concat(reader.push(extended)).toString("latin1")).toBe("abc\0\xff\n");
    expect(reader.done).toBe(true);

    const cut = new BinaryCopyColumnReader();
    cut.push(input.subarray(0, input.length - 1));
    expect(() => cut.end()).toThrow(/before its trailer/);
    expect(() => new BinaryCopyColumnReader().push(Buffer.from("not a copy stream at all"))).toThrow(/not binary COPY/);
    expect(() => new BinaryCopyColumnReader().push(encodeBinaryCopy([[Buffer.from("a"), null]]))).toThrow(/2 fields/);
  });
});
