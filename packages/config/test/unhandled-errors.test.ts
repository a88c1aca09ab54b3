import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

/** A process with the handlers installed, which then fails in a way nothing handles. */
const script = (failure: string) => `
import { exitOnUnhandledErrors } from "${new URL("../src/index.ts", import.meta.url).pathname}";
exitOnUnhandledErrors({ fatal: (details, message) => console.error(JSON.stringify({ message, error: String(details.err) })) });
${failure}
setTimeout(() => console.log("still running"), 2000);
`;

function run(failure: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script(failure)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("exitOnUnhandledErrors", () => {
  it("logs a throw from a timer and exits 1 at once, instead of limping on", async () => {
    const result = await run(`setImmediate(() => { throw new Error("boom in a timer"); });`);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain("still running");
    expect(JSON.parse(result.stderr.trim())).toEqual({
      message: "uncaught exception: exiting so that a fresh process takes over",
      error: "Error: boom in a timer",
    });
  });

  it("does the same for a promise rejection nobody handles", async () => {
    const result = await run(`void Promise.reject(new Error("nobody awaits me"));`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unhandled promise rejection");
    expect(result.stderr).toContain("nobody awaits me");
  });
});
