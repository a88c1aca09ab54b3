/**
 * Dependency hygiene that `npm ci` does not check: one esbuild for every tool that compiles
 * TypeScript (tsx, vitest's vite, drizzle-kit, the image build), Node type definitions of the Node
 * major the project runs on, and an installed tree that `npm ls` finds consistent.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repository } from "./doc-shell-block";

interface LockPackage {
  version?: string;
  dev?: boolean;
}

async function lockedVersions(name: string): Promise<Map<string, string>> {
  const lock = JSON.parse(await readFile(path.join(repository, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockPackage>;
  };
  const versions = new Map<string, string>();
  for (const [location, entry] of Object.entries(lock.packages)) {
    if ((location === `node_modules/${name}` || location.endsWith(`/node_modules/${name}`)) && entry.version) {
      versions.set(location, entry.version);
    }
  }
  return versions;
}

describe("dependencies", () => {
  it("lock exactly one esbuild, the one the root package names", async () => {
    const versions = await lockedVersions("esbuild");
    expect([...new Set(versions.values())], `esbuild copies: ${JSON.stringify([...versions])}`).toHaveLength(1);
    const root = JSON.parse(await readFile(path.join(repository, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    expect(root.devDependencies.esbuild?.replace(/^\^/, "")).toBe(versions.get("node_modules/esbuild"));
  });

  it("type-check against the Node major the project runs on (.nvmrc, engines, the image)", async () => {
    const nvmrc = (await readFile(path.join(repository, ".nvmrc"), "utf8")).trim();
    const runtimeMajor = nvmrc.split(".")[0];
    const dockerfile = await readFile(path.join(repository, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(new RegExp(`node:${runtimeMajor}[.\\-]`));
    const typesVersions = new Set((await lockedVersions("@types/node")).values());
    expect([...typesVersions].map((version) => version.split(".")[0])).toEqual([runtimeMajor]);
  });

  it("leave `npm ls` nothing invalid, missing or extraneous", { timeout: 60_000 }, async () => {
    // npm ls exits non-zero for an invalid, missing or extraneous package and names it on stderr.
    const stdout = await promisify(execFile)("npm", ["ls", "--all", "--json"], {
      cwd: repository,
      maxBuffer: 64 * 1024 * 1024,
    }).then(
      (result) => result.stdout,
      (error: { stdout?: string }) => error.stdout ?? "{}",
    );
    const tree = JSON.parse(stdout) as { problems?: string[]; dependencies?: object };
    expect(tree.dependencies, "npm ls printed no tree").toBeDefined();
    expect(tree.problems ?? []).toEqual([]);
  });
});
