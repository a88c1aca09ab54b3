/**
 * docs/operations.md's shell blocks that can run here, run as they stand: the health checks with
 * bash against the API served on a free port (the test app's database and Redis). What they print
 * is what the page says they print. The other blocks start Docker or the whole system, which a
 * test cannot do here; e2e/test/compose-check.test.ts holds compose and the image to the code.
 */
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { repository, shellBlockBelow } from "../doc-shell-block";

const run = promisify(execFile);

describe("docs/operations.md: health", () => {
  let t: TestApp;
  let server: ServerType;
  let api: string;

  beforeAll(async () => {
    t = await createTestApp();
    server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await t?.close();
  });

  it("answers the health checks as the page shows them", async () => {
    const script = await shellBlockBelow("docs/operations.md", "## Health");
    // the comments after each command are what the page promises it prints
    const promised = [...script.matchAll(/#\s*(\{[^}]*\})/g)].map((match) => match[1]);
    expect(promised).toEqual(['{"status":"ok"}', '{"status":"ready"}']);
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
      cwd: repository,
      env: { ...process.env, API: api },
    });
    expect(stdout).toBe(promised.join(""));
  });
});
