import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminDatabaseUrl } from "@studyflow/testkit";
import { startCountingProxy, type CountingProxy } from "../bench/api-bench-wire";

/** The API bench's wire counts (e2e/bench/api-bench-wire.ts), against what postgres.js is known to send. */
describe("the API bench's counting proxy", () => {
  let proxy: CountingProxy;
  let sql: postgres.Sql;

  beforeAll(async () => {
    const server = new URL(adminDatabaseUrl);
    proxy = await startCountingProxy(server.hostname, Number(server.port || 5432));
    const through = new URL(adminDatabaseUrl);
    through.hostname = "127.0.0.1";
    through.port = String(proxy.port);
    sql = postgres(through.toString(), { max: 1, onnotice: () => undefined, fetch_types: false });
    await sql`select 1`;
    proxy.take();
  });
  afterAll(async () => {
    await sql.end();
    await proxy.close();
  });

  it("a prepared statement is parsed and described once per connection, then runs in one round trip", async () => {
    await sql`select ${1}::int as one, 'first' as tag`;
    const first = proxy.take();
    // postgres.js describes a new statement with parameters first, then runs it: two round trips
    expect(first).toMatchObject({ parsedNamed: 1, parsedUnnamed: 0, describes: 1, executes: 1, roundTrips: 2 });
    await sql`select ${2}::int as one, 'first' as tag`;
    const again = proxy.take();
    expect(again).toMatchObject({ parsedNamed: 0, parsedUnnamed: 0, describes: 0, executes: 1, roundTrips: 1 });
    expect([...again.texts.keys()]).toEqual(["(prepared) select $1::int as one, 'first' as tag"]);
  });

  it("an unprepared statement is parsed and described on every execution; a simple query counts as one parsed", async () => {
    for (let run = 0; run < 2; run++) await sql.unsafe("select $1::int as two", [run], { prepare: false });
    // as drizzle's unprepared statements run: describe, then run, each time
    expect(proxy.take()).toMatchObject({ parsedUnnamed: 2, parsedNamed: 0, describes: 2, executes: 2, roundTrips: 4 });
    await sql.unsafe("select 3");
    expect(proxy.take()).toMatchObject({ simpleQueries: 1, executes: 0, roundTrips: 1 });
  });

  it("statements sent together count as one round trip; a new connection counts its handshake", async () => {
    const both = () =>
      sql.begin(async (tx) => {
        await Promise.all([tx`select ${1}::int as a`, tx`select ${2}::int as b`]);
      });
    await both(); // prepares the two
    proxy.take();
    await both();
    const counts = proxy.take();
    // begin and the two selects together (the driver sends a transaction's first statements behind
    // its BEGIN), commit
    expect(counts.roundTrips).toBe(2);
    expect(counts.executes + counts.simpleQueries).toBe(4);
    const other = postgres(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`, { max: 1, fetch_types: false });
    await other`select 1`;
    await other.end();
    expect(proxy.take().connections).toBe(1);
  });
});
