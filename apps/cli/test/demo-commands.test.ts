import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { createCapturedOutput, describeFailure, parseCommandLine, usage, type CliContext } from "../src/index";
import { loadConfig } from "../src/config";
import { systemClock } from "@studyflow/domain/foundation";

/** The command line's verdict: help text, a runnable command, or the usage error the entry would show. */
function verdict(argv: string[]) {
  try {
    const line = parseCommandLine(argv);
    return line.kind === "help" ? { help: line.text } : { run: line.command, uses: line.uses, json: line.json };
  } catch (error) {
    return describeFailure(error);
  }
}

describe("the demo commands on the command line", () => {
  it("have their own help, which needs no environment", () => {
    expect(verdict(["demo:seed", "--help"])).toEqual({ help: usage("demo:seed") });
    expect(usage("demo:seed")).toContain("demo:seed [--out FILE] [--participants N] [--json]");
    expect(verdict(["demo", "--help"])).toEqual({ help: usage("demo") });
    expect(usage("demo")).toContain("demo [--base-url URL] [--demo-file FILE] [--mailpit URL] [--json]");
    expect(usage()).toContain("  demo:seed");
  });

  it("need the database: the seed writes it, the walkthrough seeds and reads the outbox", () => {
    expect(verdict(["demo:seed"])).toEqual({ run: "demo:seed", uses: "database", json: false });
    expect(verdict(["demo", "--base-url", "http://api.example:8080/", "--json"])).toEqual({
      run: "demo",
      uses: "database",
      json: true,
    });
  });

  it.each([
    [
      ["demo:seed", "--participants", "many"],
      'demo:seed: --participants must be a whole number from 0 to 5000000, got "many"',
    ],
    [
      ["demo:seed", "--participants", "5000001"],
      'demo:seed: --participants must be a whole number from 0 to 5000000, got "5000001"',
    ],
    [
      ["demo", "--base-url", "localhost:8080"],
      'demo: --base-url must be an http:// or https:// URL, got "localhost:8080"',
    ],
    [["demo", "--demo"], "demo: unknown flag --demo (see: help demo)"],
  ])("refuses %j", (argv, message) => {
    expect(verdict(argv)).toEqual({ exitCode: 1, message });
  });
});

describe("commander's parsing, in the CLI's words", () => {
  it.each([
    [["help", "frobnicate"], 'unknown command "frobnicate" (run "help" for the list)'],
    [["frobnicate", "--help"], 'unknown command "frobnicate" (run "help" for the list)'],
    [["--json"], 'unknown command "--json" (run "help" for the list)'],
    // A mistyped flag explains a missing one, so it is named first.
    [["study:create", "--kye", "s"], "study:create: unknown flag --kye (see: help study:create)"],
    [["study:create", "--key", "s", "--json=yes"], "study:create: flag --json takes no value"],
    [["token:revoke", "--subject", "-x"], "token:revoke: flag --subject needs a value"],
    [["study:create", "--key", ""], "study:create: --key needs a non-empty value"],
  ])("%j", (argv, message) => {
    expect(verdict(argv)).toEqual({ exitCode: 1, message });
  });

  it("takes a value starting with a dash when it is given inline", () => {
    expect(verdict(["token:revoke", "--subject=-x"])).toEqual({ run: "token:revoke", uses: "database", json: false });
  });

  it("answers -h and help alike", () => {
    expect(verdict(["-h"])).toEqual({ help: usage() });
    expect(verdict(["user:create", "-h"])).toEqual({ help: usage("user:create") });
    expect(verdict(["help", "user:create"])).toEqual({ help: usage("user:create") });
  });
});

describe("demo:seed", () => {
  let database: TestDatabase;
  let outDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    outDir = await mkdtemp(join(tmpdir(), "studyflow-demo-seed-"));
  });

  afterAll(async () => {
    await database.drop();
    await rm(outDir, { recursive: true, force: true });
  });

  it("writes the walkthrough values to --out and prints them as one JSON object", async () => {
    const out = join(outDir, "nested", "demo.json");
    const line = parseCommandLine(["demo:seed", "--participants", "20", "--out", out, "--json"]);
    if (line.kind !== "run") throw new Error("not a command");
    const { output, captured } = createCapturedOutput(line.json);
    const ctx: CliContext = {
      database,
      config: loadConfig({ NODE_ENV: "test", DATABASE_URL: database.url }),
      output,
      workingDirectory: outDir,
      clock: systemClock,
    };
    await line.run(ctx);
    expect(captured.stderr).toBe("");
    expect(captured.stdout.trimEnd().split("\n")).toHaveLength(1);
    const printed = JSON.parse(captured.stdout);
    expect(printed).toMatchObject({ out, demo: { studyKey: "demo-study", userEmail: "pat@demo.studyflow.local" } });
    expect(JSON.parse(await readFile(out, "utf8"))).toEqual(printed.demo);
  });
});
