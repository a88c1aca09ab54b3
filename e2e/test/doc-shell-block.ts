import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { serve } from "@hono/node-server";
import { createTestApp, type TestApp } from "@studyflow/api/testing";

/** The repository's root, for the documents whose commands the tests run. */
export const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The first ```sh block below `heading` in a document of the repository (a path relative to its
 * root): what a reader copies into a shell, run by the tests as it stands so the page cannot drift.
 */
export async function shellBlockBelow(document: string, heading: string): Promise<string> {
  const text = await readFile(path.join(repository, document), "utf8");
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`${document} has no heading "${heading}"`);
  const block = /```sh\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (!block?.[1]) throw new Error(`${document}: no sh block below "${heading}"`);
  return block[1];
}

const execFileAsync = promisify(execFile);

/** Runs a shell block as a reader would: bash with -euo pipefail, in the repository's root. */
export function runShellBlock(script: string, env: NodeJS.ProcessEnv) {
  return execFileAsync("bash", ["-euo", "pipefail", "-c", script], {
    cwd: repository,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
}

export interface ServedTestApp {
  t: TestApp;
  /** Where it is served: the `$API` the pages' blocks call. */
  url: string;
  /** Closes the server, then the test app. */
  close: () => Promise<void>;
}

/** A test app (createTestApp) served on a free port of 127.0.0.1. */
export async function serveTestApp(): Promise<ServedTestApp> {
  const t = await createTestApp();
  const server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return {
    t,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

/**
 * The environment for `npm run cli` on a test app's database, with its token secrets; with
 * `queue`, also its Redis and queue prefix, for commands that a worker beside the app carries out.
 */
export function cliEnvironment(t: TestApp, { queue = false } = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: "test",
    DATABASE_URL: t.database.url,
    ...(queue ? { REDIS_URL: t.config.REDIS_URL, QUEUE_PREFIX: t.config.QUEUE_PREFIX } : {}),
    MANAGEMENT_JWT_SECRET: t.config.MANAGEMENT_JWT_SECRET,
    PARTICIPANT_JWT_SECRET: t.config.PARTICIPANT_JWT_SECRET,
  };
}
