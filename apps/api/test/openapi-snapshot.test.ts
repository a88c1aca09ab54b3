import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./test-app";

/**
 * The OpenAPI document as served, pinned: a refactoring of routers, schemas or error wiring must
 * leave the contract byte for byte as it was, and a deliberate change shows up as a reviewed diff
 * of this file in its commit.
 */
const SNAPSHOT_PATH = fileURLToPath(new URL("./fixtures/openapi.snapshot.json", import.meta.url));
const SNAPSHOT_NAME = "apps/api/test/fixtures/openapi.snapshot.json";
const REFRESH = `UPDATE_OPENAPI_SNAPSHOT=1 npx vitest run apps/api/test/openapi-snapshot.test.ts`;
const refreshing = process.env.UPDATE_OPENAPI_SNAPSHOT === "1";

/** Where two texts first differ, by line, with how to refresh the snapshot; "" when they are equal. */
function firstDifference(served: string, stored: string): string {
  if (served === stored) return "";
  const servedLines = served.split("\n");
  const storedLines = stored.split("\n");
  let line = 0;
  while (line < servedLines.length && servedLines[line] === storedLines[line]) line += 1;
  return [
    `The document served at /openapi.json differs from ${SNAPSHOT_NAME} from line ${line + 1} on:`,
    `  served: ${servedLines[line] ?? "(end of document)"}`,
    `  stored: ${storedLines[line] ?? "(end of file)"}`,
    `If the change to the API contract is intended, rewrite the snapshot with`,
    `  ${REFRESH}`,
    `and commit it together with the change.`,
  ].join("\n");
}

describe("OpenAPI document snapshot", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("is served exactly as committed", async () => {
    const res = await t.app.request("/openapi.json");
    expect(res.status).toBe(200);
    // Pretty-printed in the order the document is served, so that a change reads as a line diff.
    const served = `${JSON.stringify(JSON.parse(await res.text()), null, 2)}\n`;
    if (refreshing) {
      await writeFile(SNAPSHOT_PATH, served);
      return;
    }
    const stored = await readFile(SNAPSHOT_PATH, "utf8").catch((error: unknown) => {
      throw new Error(`cannot read ${SNAPSHOT_NAME} (${String(error)}); write it with\n  ${REFRESH}`);
    });
    expect(firstDifference(served, stored)).toBe("");
  });
});
