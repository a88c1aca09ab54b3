// A stored file's download, served by @hono/node-server as the API is: the bytes go out as the
// store gives them, the store is read only as far as a client takes the bytes, a client that goes
// away ends the store's read, and an answer whose body nobody reads (HEAD) reads nothing.
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppEnv } from "../src/app-env";
import { sendFile } from "../src/routes/download";

const CHUNK = 64 * 1024;
// 64 MB: far more than the sockets between server and client buffer, so backpressure shows
const CHUNKS = 1000;

/** A stored file's stream that counts the chunks it gave and says whether it was ended. */
function countingFile() {
  const state = { given: 0, ended: false };
  function* chunks() {
    try {
      for (let i = 0; i < CHUNKS; i++) {
        state.given++;
        yield Buffer.alloc(CHUNK, 97 + (i % 26));
      }
    } finally {
      state.ended = true;
    }
  }
  return { state, body: Readable.from(chunks(), { objectMode: false }) };
}

const settle = (ms = 200) => new Promise((resolve) => setTimeout(resolve, ms));

describe("sendFile", () => {
  let server: ServerType;
  let base: string;
  let last: ReturnType<typeof countingFile>["state"] | undefined;

  beforeAll(async () => {
    const app = new Hono<AppEnv>();
    app.get("/file", (c) => {
      const file = countingFile();
      last = file.state;
      return sendFile(c, { fileName: "a b.csv", contentType: "text/csv", size: CHUNK * CHUNKS, body: file.body });
    });
    server = await new Promise<ServerType>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
  });

  it("sends the stored bytes with the attachment's headers", async () => {
    const response = await fetch(`${base}/file`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv");
    expect(response.headers.get("content-length")).toBe(String(CHUNK * CHUNKS));
    expect(response.headers.get("content-disposition")).toBe("attachment; filename=a_b.csv");
    expect(response.headers.get("cache-control")).toBe("private, no-store");
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(CHUNK * CHUNKS);
    for (let i = 0; i < CHUNKS; i++) expect(bytes[i * CHUNK]).toBe(97 + (i % 26));
    expect(last).toEqual({ given: CHUNKS, ended: true });
  });

  it("ends the store's read when the client goes away", async () => {
    const aborted = new AbortController();
    const response = await fetch(`${base}/file`, { signal: aborted.signal });
    const reader = response.body!.getReader();
    await reader.read();
    aborted.abort();
    await settle();
    expect(last?.ended).toBe(true);
    // backpressure: the read stopped far short of the file
    expect(last!.given).toBeLessThan(CHUNKS / 2);
  });

  it("reads nothing for an answer whose body is not sent (HEAD)", async () => {
    const response = await fetch(`${base}/file`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(CHUNK * CHUNKS));
    await settle();
    expect(last?.given).toBe(0);
  });
});
