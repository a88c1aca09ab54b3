import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { REQUEST_LINE, batchedRequestLines } from "../src/logger";

describe("the API's log lines", () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  function logTo(waitMs: number) {
    const folder = mkdtempSync(path.join(tmpdir(), "sf-api-log-"));
    folders.push(folder);
    const file = path.join(folder, "out.log");
    const destination = pino.destination({ dest: file, sync: true, minLength: 2048 });
    const logger = batchedRequestLines("info", destination, waitMs);
    const written = () =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { msg: string; n?: number; service: string });
    return { logger, written };
  }

  it("writes request lines together, with the first other line or when enough wait; in order", () => {
    const { logger, written } = logTo(60_000);
    logger.info({ n: 1 }, REQUEST_LINE);
    logger.info({ n: 2 }, REQUEST_LINE);
    expect(written()).toEqual([]);
    logger.warn({ n: 3 }, "something else");
    expect(written().map(({ msg, n }) => `${msg} ${n}`)).toEqual(["request 1", "request 2", "something else 3"]);
    expect(written()[0]!.service).toBe("api");
    // a child logger (loggerOf) writes its lines at once too
    logger.child({ requestId: "r" }).info({ n: 4 }, "a step");
    expect(written()).toHaveLength(4);
    // ~2 KB of request lines are written without waiting for anything else
    for (let n = 5; n < 45; n++) logger.info({ n, path: "/v1/studies/s/participants/p/responses" }, REQUEST_LINE);
    expect(written().length).toBeGreaterThan(4);
    expect(written().length).toBeLessThan(44);
  });

  it("writes a waiting request line after the wait", async () => {
    const { logger, written } = logTo(50);
    logger.info({ n: 1 }, REQUEST_LINE);
    expect(written()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(written().map(({ n }) => n)).toEqual([1]);
  });
});
