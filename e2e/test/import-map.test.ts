/**
 * The import map (.dependency-cruiser.cjs, docs/architecture.md) holds, and its check fails on
 * what it forbids: a folder importing a folder above it, a circle of files, a route importing the
 * query builder, a folder the map does not place. Each refusal is shown on a file written for the
 * test beside real code and removed after it (untracked, so nothing else reads it).
 */
import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { repository } from "./doc-shell-block";

const run = promisify(execFile);

/** The check's verdict on `paths` (relative to the repository): the rules they break. */
async function violations(...paths: string[]): Promise<string[]> {
  const cruiser = path.join(repository, "node_modules/.bin/depcruise");
  try {
    await run(cruiser, ["--config", ".dependency-cruiser.cjs", "--output-type", "err", ...paths], {
      cwd: repository,
      maxBuffer: 16 * 1024 * 1024,
    });
    return [];
  } catch (error) {
    const output = (error as { stdout?: string }).stdout ?? "";
    return [...output.matchAll(/error ([\w-]+):/g)].map((match) => match[1] ?? "");
  }
}

const written: string[] = [];
async function write(relative: string, text: string): Promise<string> {
  const file = path.join(repository, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  written.push(file);
  return relative;
}

afterEach(async () => {
  for (const file of written.splice(0)) await rm(file, { force: true });
  await rm(path.join(repository, "packages/domain/src/unplaced-folder"), { recursive: true, force: true });
});

describe("the import map", { timeout: 120_000 }, () => {
  it("holds for the whole repository", async () => {
    expect(await violations("packages", "apps", "e2e")).toEqual([]);
  });

  it("refuses a domain leaf importing an orchestrator above it", async () => {
    const file = await write(
      "packages/domain/src/foundation/import-map-probe.ts",
      'export { createStudy } from "../study-setup/study-setup";\n',
    );
    expect(await violations(file)).toContain("folder-layers");
  });

  it("refuses a circle of files", async () => {
    const a = await write(
      "packages/engine/src/import-map-probe-a.ts",
      'import { b } from "./import-map-probe-b";\nexport const a = () => b;\n',
    );
    await write(
      "packages/engine/src/import-map-probe-b.ts",
      'import { a } from "./import-map-probe-a";\nexport const b = () => a;\n',
    );
    expect(await violations(a)).toContain("no-circular");
  });

  it("refuses a route importing the query builder", async () => {
    const file = await write(
      "apps/api/src/routes/import-map-probe.ts",
      'import { eq } from "drizzle-orm";\nexport const probe = eq;\n',
    );
    expect(await violations(file)).toContain("routes-not-drizzle");
  });

  it("refuses a package importing an app, and a folder the map does not place", async () => {
    const upward = await write(
      "packages/engine/src/import-map-probe.ts",
      'export { createApp } from "../../../apps/api/src/app";\n',
    );
    expect(await violations(upward)).toEqual(expect.arrayContaining(["packages-not-apps", "package-engine"]));
    const unplaced = await write(
      "packages/domain/src/unplaced-folder/probe.ts",
      'export { Invalid } from "../errors";\n',
    );
    expect(await violations(unplaced)).toContain("folder-not-in-map");
  });
});
