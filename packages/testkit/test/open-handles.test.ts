import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { adminDatabaseUrl } from "../src/env";

const repository = fileURLToPath(new URL("../../../", import.meta.url));
const config = fileURLToPath(new URL("./fixtures/open-handles/vitest.config.ts", import.meta.url));

/** Runs vitest over the fixtures as the suite runs its files; its exit code and all it printed. */
function runFixtures(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--config", config], {
      cwd: repository,
      env: { ...process.env, TEST_OPEN_HANDLES_SETTLE_MS: "500", TEST_OPEN_HANDLES_REPORT: "", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

it("fails a file that leaves a server, a database pool or a timer open, names what it left, and passes one that closes what it opened", async () => {
  const { code, output } = await runFixtures();
  expect(code, output).toBe(1);
  const server = /leaves-a-server\.fixture\.ts left open what it opened: (.*)/.exec(output)?.[1] ?? "";
  const port = /server on 127\.0\.0\.1:(\d+)/.exec(server)?.[1];
  expect(port, output).toBeDefined();
  // the client's socket to the server, and the server's to the client
  expect(server).toMatch(new RegExp(`socket \\d+ → 127\\.0\\.0\\.1:${port}`));
  expect(server).toMatch(new RegExp(`socket ${port} → 127\\.0\\.0\\.1:\\d+`));
  expect(output).toMatch(/leaves-a-timer\.fixture\.ts left open what it opened: 1 timer \(pollForever\)/);
  // a pool's connection, named by the database's address
  const database = new URL(adminDatabaseUrl);
  expect(output).toContain(`leaves-a-pool.fixture.ts left open what it opened: socket `);
  expect(output).toMatch(new RegExp(`leaves-a-pool.* → [\\d.:a-f]+:${database.port || 5432}`));
  expect(output).not.toMatch(/closes-what-it-opens\.fixture\.ts left open/);
  // the files' tests all passed; the summary line still counts each failed file
  expect(output).toContain("Tests: 4 passed, 3 failed");
}, 60_000);
