/**
 * One transaction scenario against the real PostgreSQL, run as its own process with the driver
 * under test (the installed one or an unpatched copy):
 *
 *   node --import tsx transactions.ts <scenario> <postgres-package-dir> <database-url>
 *
 * The driver's socket is watched (its public `socket` option hands us the socket it uses): a
 * flight is what the driver writes between two answers of the server, so a transaction's
 * flights are its round trips. It prints one JSON line, {"outcome": ...}.
 */
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";

import type postgresType from "postgres";

const [scenario = "", driverDir = "", databaseUrl = ""] = process.argv.slice(2);
const { default: postgres } = (await import(pathToFileURL(path.join(driverDir, "src/index.js")).href)) as {
  default: typeof postgresType;
};

let flights = 0;
const url = new URL(databaseUrl);
function openSocket() {
  const socket = net.connect({ host: url.hostname, port: Number(url.port || 5432) });
  let answered = true;
  const write = socket.write.bind(socket) as (...args: Parameters<net.Socket["write"]>) => boolean;
  socket.write = ((...args: Parameters<net.Socket["write"]>) => {
    if (answered) flights++;
    answered = false;
    return write(...args);
  }) as net.Socket["write"];
  socket.on("data", () => {
    answered = true;
  });
  return socket;
}

// `socket` (a function giving the socket to use) is a driver option its type declarations omit.
const socketOption = { socket: openSocket } as object;
const sql = postgres(databaseUrl, {
  max: 2,
  fetch_types: false,
  connect_timeout: 5,
  onnotice: () => {},
  ...socketOption,
});

const errorCode = (error: unknown) => (error as { code?: string }).code ?? String(error);
const table = `driver_tx_${process.pid}`;
const rowCount = async () => (await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`))[0]!.n;

const scenarios: Record<string, () => Promise<Record<string, unknown>>> = {
  /** A transaction of one statement, on a connection already open: its round trips. */
  async "round-trips"() {
    await sql`select 1`;
    flights = 0;
    const one = await sql.begin(async (tx) => (await tx`select 1 as one`)[0]!.one as number);
    const single = flights;
    flights = 0;
    await sql.begin(async (tx) => {
      await tx`select 1`;
      await tx`select 2`;
    });
    return { one, single, twoStatements: flights };
  },

  /** A statement written behind the BEGIN is the transaction's: the rollback takes it back. */
  async "first-statement-rolls-back"() {
    const error = await sql
      .begin(async (tx) => {
        await tx.unsafe(`insert into ${table} values (1)`);
        throw new Error("the caller's failure");
      })
      .catch((e: Error) => e.message);
    const failed = await sql
      .begin(async (tx) => {
        await tx.unsafe(`insert into ${table} values (2)`);
        await tx`select 1 / 0`;
      })
      .catch(errorCode);
    return { error, failed, rows: await rowCount() };
  },

  /** A BEGIN the server refuses: nothing of the callback runs outside the transaction. */
  async "refused-begin"() {
    const refused = await sql
      .begin("isolation level nonsense", async (tx) => {
        await tx.unsafe(`insert into ${table} values (3)`);
      })
      .catch(errorCode);
    return { refused, rows: await rowCount() };
  },

  /** More transactions than connections: each one's statements run in its own transaction. */
  async concurrent() {
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        sql.begin(async (tx): Promise<string> => {
          const [first] = await tx<{ id: string }[]>`select txid_current()::text as id`;
          await tx.unsafe(`insert into ${table} values (${100 + i})`);
          const [second] = await tx<{ id: string }[]>`select txid_current()::text as id`;
          return first!.id === second!.id ? first!.id : `split ${first!.id} ${second!.id}`;
        }),
      ),
    );
    return {
      transactions: new Set(ids).size,
      split: ids.filter((id) => id.startsWith("split")).length,
      rows: await rowCount(),
    };
  },
};

const run = scenarios[scenario];
if (!run) throw new Error(`unknown scenario ${scenario}`);
await sql.unsafe(`create table ${table} (x int primary key)`);
try {
  const outcome = await run();
  console.log(JSON.stringify({ outcome }));
} finally {
  await sql.unsafe(`drop table ${table}`);
  await sql.end({ timeout: 5 });
}
