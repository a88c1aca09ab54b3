/**
 * One connection-close scenario against the real PostgreSQL, run as its own process so that a
 * driver defect that throws from a timer callback shows as what it is: the process dies.
 *
 *   node --import tsx connection-close.ts <scenario> <postgres-package-dir> <database-url>
 *
 * Each scenario closes the driver's socket at a chosen point of the event loop (the driver's
 * public `socket` option hands us the socket it uses) and then asks for the query that should
 * work. It prints one JSON line, {"outcome": ...}, and exits 0 when the driver settled every
 * query; a crash of the driver exits non-zero with its stack on stderr.
 */
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";

import type postgresType from "postgres";
import { startTcpProxy } from "@studyflow/testkit";

const [scenario = "", driverDir = "", databaseUrl = ""] = process.argv.slice(2);
// The driver under test: the installed one or an unpatched copy, loaded from its folder.
const { default: postgres } = (await import(pathToFileURL(path.join(driverDir, "src/index.js")).href)) as {
  default: typeof postgresType;
};

/** Every socket the driver opened, newest last. */
const sockets: net.Socket[] = [];
const url = new URL(databaseUrl);
/** When set, a new socket reaches the driver only this many ms after it asked (see openSocket). */
let handOverDelayMs = 0;
function openSocket(): net.Socket | Promise<net.Socket> {
  const socket = net.connect({ host: url.hostname, port: Number(url.port || 5432) });
  sockets.push(socket);
  if (handOverDelayMs === 0) return socket;
  // Until the promise settles the driver's connection has no socket: a scenario holds that window
  // open for as long as it needs, however loaded the machine is.
  return new Promise((resolve) => setTimeout(() => resolve(socket), handOverDelayMs));
}

// `socket` (a function giving the socket to use) is a driver option its type declarations omit.
const socketOption = { socket: openSocket } as object;
const sql = postgres(databaseUrl, {
  max: 1,
  fetch_types: false,
  connect_timeout: 5,
  onnotice: () => {},
  ...socketOption,
});

interface Settled {
  ok?: number;
  error?: string;
  hung?: number;
}
const settle = (promise: Promise<readonly unknown[]>): Promise<Settled> =>
  promise.then(
    (rows) => ({ ok: rows.length }),
    (error: { code?: string; message: string }) => ({ error: error.code ?? error.message }),
  );
/** A limit on a query that must settle: the driver hanging is an outcome, not a test timeout. */
const within = (promise: Promise<Settled>, ms: number) =>
  Promise.race([promise, new Promise<Settled>((resolve) => setTimeout(() => resolve({ hung: ms }), ms))]);
const newest = () => sockets.at(-1)!;

const scenarios: Record<string, () => Promise<Record<string, Settled>>> = {
  /**
   * A reserved connection (what a transaction holds) loses its socket while a query waits. The
   * caller reacts to the rejection by writing again on the same connection, as a transaction's
   * ROLLBACK does. The driver defers that small write to setImmediate, and by then its socket is
   * gone. The patched driver rejects the write; 3.4.9 throws from the timer and the process dies.
   */
  async "write-after-close"() {
    await sql`select 1`;
    const reserved = await sql.reserve();
    await reserved`select 1`;
    const waiting = settle(reserved`select pg_sleep(30)`);
    newest().destroy();
    const first = await waiting;
    const second = await within(settle(reserved`select 1`), 3000);
    reserved.release();
    return { first, second };
  },

  /**
   * The socket closes while a small write is still deferred (the query was issued from an
   * immediate, the close lands in the same loop turn). 3.4.9 cancels the deferred write but keeps
   * its timer handle and its bytes, so the connection never flushes a write again: its reconnect
   * never sends the startup message and the next query waits for the connect timeout. The patched
   * driver forgets both, and the next query runs on a fresh connection.
   */
  async "close-with-deferred-write"() {
    await sql`select 1`;
    const first = await new Promise<Settled>((resolve) =>
      setImmediate(() => {
        const waiting = settle(sql`select 2`);
        newest().destroy();
        resolve(waiting);
      }),
    );
    const second = await within(settle(sql`select 1`), 3000);
    return { first, second };
  },

  /**
   * Every connection is reset (an RST: a failover, a proxy or load balancer dropping them) while
   * queries run. The socket's error fails those; queries sent after that error but before the
   * socket's close (the pool still counts the connection as busy) waited forever on 3.4.9, which
   * fails pending queries on close only when there was no error. The patched driver fails them
   * too, and the pool serves the next queries on new connections.
   */
  async "reset-with-queries-in-between"() {
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    const port = proxy.port;
    const pool = postgres(`postgres://${url.username || "postgres"}@127.0.0.1:${port}${url.pathname}`, {
      max: 4,
      fetch_types: false,
      onnotice: () => {},
    });
    await Promise.all(Array.from({ length: 4 }, () => pool`select pg_sleep(0.05)`));
    const running = Array.from({ length: 4 }, () => settle(pool`select pg_sleep(0.5)`));
    await new Promise((resolve) => setTimeout(resolve, 50));
    proxy.reset();
    const first = await running[0]!;
    // sent between the sockets' errors and their closes
    const between = await within(
      Promise.all(Array.from({ length: 4 }, () => settle(pool`select 1`))).then((all) => ({
        error: [...new Set(all.map((one) => one.error ?? "ok"))].join(","),
      })),
      3000,
    );
    const next = await within(settle(pool`select 1`), 3000);
    await pool.end({ timeout: 1 });
    await proxy.close();
    return { first, between, next };
  },

  /**
   * The server ends a connection with an error (a terminated backend says 57P01) while a query
   * waits. 3.4.9 keeps that error response across the reconnect and hands it to the first query
   * of the new connection. The patched driver starts the new connection clean.
   */
  async "error-before-close"() {
    const admin = postgres(databaseUrl, { max: 1, fetch_types: false, onnotice: () => {} });
    const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const pid = backend!.pid;
    const waiting = settle(sql`select pg_sleep(30)`);
    await admin`select pg_terminate_backend(${pid})`;
    await admin.end();
    const first = await waiting;
    const second = await within(settle(sql`select 1`), 3000);
    return { first, second };
  },

  /**
   * A COPY … FROM STDIN the server refuses (a row breaks a constraint). The query's promise has
   * already resolved to the stream, so 3.4.9 drops the error and the stream never finishes; the
   * patched driver ends the stream with the server's error. The connection works afterwards.
   */
  async "copy-refused"() {
    await sql`create temp table copied (n int not null)`;
    const copy = async (rows: string) => {
      const stream = await sql`copy copied (n) from stdin`.writable();
      await new Promise<void>((resolve, reject) => {
        stream.on("error", reject);
        stream.on("finish", resolve);
        stream.end(rows);
      });
      return [] as const;
    };
    const refused = await within(settle(copy("1\n\\N\n")), 3000);
    const accepted = await within(settle(copy("2\n")), 3000);
    const after = await within(settle(sql`select n from copied`), 3000);
    return { refused, accepted, after };
  },

  /**
   * A transaction's connection closes while the transaction's own code runs, and another query
   * waits for the pool's only connection: the pool starts connecting again for that query at once.
   * The transaction's code then sends its next statement (as its ROLLBACK does). That statement
   * belongs to no connection any more: it must fail by itself, and the waiting query must get its
   * own answer. Sent to the reconnecting connection, it fails the waiting query with it, or, once
   * the new socket is open, runs outside any transaction and takes the waiting query's answer.
   */
  async "statement-after-transaction-lost"() {
    await sql`select 1`;
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    let late: Promise<Settled> = Promise.resolve({});
    const transaction = settle(
      sql.begin(async (tx) => {
        await tx`select 1`;
        await paused;
        late = within(settle(tx`select 1 from generate_series(1, 3)`), 3000);
        await late;
        return [];
      }),
    );
    const waiting = within(
      sql`select 42 as answer`.then(
        (rows) => ({ ok: Number(rows[0]?.answer) }),
        (error: { code?: string; message: string }) => ({ error: error.code ?? error.message }),
      ),
      3000,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The reopened connection gets its socket a second late, so the late statement is always
    // written while there is none (on an idle machine the reconnect also loses that race; on a
    // busy one it sometimes won it, and the defect did not show).
    handOverDelayMs = 1000;
    newest().destroy();
    const lost = await within(transaction, 3000);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return { lost, late: await late, waiting: await waiting };
  },
};

const run = scenarios[scenario];
if (!run) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
const outcome = await run();
console.log(JSON.stringify({ outcome }));
await sql.end({ timeout: 1 });
process.exit(0);
