/** The database connections studyflow opens: TCP_NODELAY as libpq, multi-host URLs left to postgres.js. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { createDb } from "../src/client";
import { isSingleHostUrl } from "../src/socket";

describe("database sockets", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("a URL with one host opens its own socket; several hosts are postgres.js's to try in turn", () => {
    expect(isSingleHostUrl("postgres://postgres@127.0.0.1:5432/app")).toBe(true);
    expect(isSingleHostUrl("postgres://u:p%2C@db.example:5432/app?sslmode=require")).toBe(true);
    expect(isSingleHostUrl("postgres://u@db1:5432,db2:5432/app")).toBe(false);
    expect(isSingleHostUrl("postgres://u@db1,db2/app")).toBe(false);
  });

  it("connects, copies and queries through the socket, and opens a new socket after the server ends the connection", async () => {
    const handle = createDb(database.url, { max: 1, applicationName: "socket-test" });
    try {
      const stream = await handle.sql`copy (select 1) to stdout`.readable();
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe("1\n");
      const [first] = await handle.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
      const pid = first!.pid;
      const admin = createDb(database.url, { max: 1 });
      await admin.sql`select pg_terminate_backend(${pid})`;
      await admin.close();
      // queries fail with the ended connection until the client has seen it close (its own time,
      // one query or more); then one runs on a new connection
      let next: number | undefined;
      for (let attempt = 0; attempt < 100 && next === undefined; attempt++) {
        const rows = await handle.sql<{ pid: number }[]>`select pg_backend_pid() as pid`.catch(() => undefined);
        if (rows) next = rows[0]!.pid;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(next).toBeDefined();
      expect(next).not.toBe(pid);
    } finally {
      await handle.close();
    }
  });
});
