/**
 * docs/operations.md's shell blocks that can run here, run as they stand: the health checks with
 * bash against the API served on a free port (the test app's database and Redis). What they print
 * is what the page says they print. The other blocks start Docker or the whole system, which a
 * test cannot do here; e2e/test/compose-check.test.ts holds compose and the image to the code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runShellBlock, serveTestApp, shellBlockBelow, type ServedTestApp } from "../doc-shell-block";

describe("docs/operations.md: health", () => {
  let api: ServedTestApp;

  beforeAll(async () => {
    api = await serveTestApp();
  });
  afterAll(async () => {
    await api?.close();
  });

  it("answers the health checks as the page shows them", async () => {
    const script = await shellBlockBelow("docs/operations.md", "## Health");
    // the comments after each command are what the page promises it prints
    const promised = [...script.matchAll(/#\s*(\{[^}]*\})/g)].map((match) => match[1]);
    expect(promised).toEqual(['{"status":"ok"}', '{"status":"ready"}']);
    const { stdout } = await runShellBlock(script, { ...process.env, API: api.url });
    expect(stdout).toBe(promised.join(""));
  });
});
