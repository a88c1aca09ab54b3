/**
 * The postgres.js patch completes a message split across socket reads with only the bytes of the
 * next read it needs, and handles the rest of that read in place (patches/postgres+3.4.9.patch,
 * `data`). A faster path, not a new behaviour: the first two cases pass on the unpatched driver
 * too, and guard the patched one. The third is new: a COPY TO STDOUT's data message (a row, which
 * for an export file's part is megabytes) goes to the copy's stream read by read instead of being
 * gathered into one buffer first. The socket here re-splits what the server sends into reads of 1
 * to 65,536 bytes in turn, so that messages end, and the next ones start, at every kind of
 * boundary: inside the 5-byte header, one byte short of the end, exactly at the end, and with
 * several messages after.
 */
import { createHash } from "node:crypto";
import net from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";

const READ_SIZES = [1, 2, 3, 4, 5, 6, 7, 13, 100, 4_099, 65_536, 1, 3];

/** A socket whose data arrives in reads of READ_SIZES in turn, whatever the network gave. */
function splittingSocket(url: URL): net.Socket {
  const socket = net.connect({ host: url.hostname, port: Number(url.port || 5432) });
  const emit = socket.emit.bind(socket) as (event: string, ...args: unknown[]) => boolean;
  let turn = 0;
  socket.emit = ((event: string, ...args: unknown[]) => {
    if (event !== "data") return emit(event, ...args);
    const chunk = args[0] as Buffer;
    for (let at = 0; at < chunk.length;) {
      const size = READ_SIZES[turn++ % READ_SIZES.length]!;
      emit("data", chunk.subarray(at, at + size));
      at += size;
    }
    return true;
  }) as typeof socket.emit;
  return socket;
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

describe("postgres.js reads", () => {
  let database: TestDatabase;
  let clients: { name: string; sql: postgres.Sql }[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    // `socket` (a function giving the socket to use) is a driver option its type declarations omit.
    const split = { socket: () => splittingSocket(url) } as object;
    clients = [
      { name: "as the network reads", sql: postgres(database.url, { max: 1, onnotice: () => undefined }) },
      { name: "split into small reads", sql: postgres(database.url, { max: 1, onnotice: () => undefined, ...split }) },
    ];
  });
  afterAll(async () => {
    for (const client of clients ?? []) await client.sql.end();
    await database?.drop();
  });

  it("give every row whole, in order, whatever the reads split them into", async () => {
    for (const { name, sql } of clients) {
      const rows = await sql<{ i: number; t: string }[]>`
        select i, repeat(md5(i::text), (i * 7919) % 500) as t from generate_series(1, 4000) i`;
      expect(rows.length, name).toBe(4000);
      const wrong = rows.filter(
        (row, index) => row.i !== index + 1 || row.t !== md5(String(row.i)).repeat((row.i * 7919) % 500),
      );
      expect(
        wrong.map((row) => row.i),
        name,
      ).toEqual([]);
    }
  });

  it("give a value of megabytes and the statements after it whole", async () => {
    for (const { name, sql } of clients) {
      const [big] = await sql<{ t: string; n: number }[]>`select repeat('0123456789abcdef', 262144) as t, 7 as n`;
      expect(big?.t.length, name).toBe(4 * 1024 * 1024);
      expect(big?.t === "0123456789abcdef".repeat(262_144), name).toBe(true);
      expect(big?.n, name).toBe(7);
      // an error and the next query on the same connection, after the split reads
      await expect(sql`select 1 / 0`, name).rejects.toThrow(/division by zero/);
      await expect(sql`select 2 as two`, name).resolves.toEqual([{ two: 2 }]);
    }
  });

  it("give a COPY TO STDOUT's bytes in order as they arrive, a row of megabytes not gathered first", async () => {
    // binary COPY of three rows of one bytea: 4 MB, empty, 70,000 bytes; the stream is read as
    // bytes, so the frames (signature, field counts, lengths, trailer) are checked as they come
    const sizes = [4 * 1024 * 1024, 0, 70_000];
    const value = (size: number, seed: number) =>
      Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251));
    const expected = Buffer.concat([
      Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"),
      Buffer.alloc(8),
      ...sizes.flatMap((size, seed) => {
        const head = Buffer.alloc(6);
        head.writeInt16BE(1, 0);
        head.writeInt32BE(size, 2);
        return [head, value(size, seed)];
      }),
      Buffer.from([0xff, 0xff]),
    ]);
    await clients[0]!.sql`create table copy_rows (n int primary key, v bytea not null)`;
    for (const [n, size] of sizes.entries())
      await clients[0]!.sql`insert into copy_rows values (${n}, ${value(size, n)})`;
    for (const { name, sql } of clients) {
      const stream = await sql.unsafe("copy (select v from copy_rows order by n) to stdout (format binary)").readable();
      const chunks: Buffer[] = [];
      for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      expect(bytes.length, name).toBe(expected.length);
      expect(bytes.equals(expected), name).toBe(true);
      // no piece larger than a read: the 4 MB row went on as the reads brought it
      expect(Math.max(...chunks.map((chunk) => chunk.length)), name).toBeLessThanOrEqual(65_536);
      // the connection reads the next statements as usual
      await expect(sql`select 3 as three`, name).resolves.toEqual([{ three: 3 }]);
    }
  });
});
