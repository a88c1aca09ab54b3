import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryPath, resultDir } from "../src/index";

const root = fileURLToPath(new URL("../../../", import.meta.url));

describe("repositoryPath", () => {
  let outside: string;
  beforeAll(async () => {
    outside = await mkdtemp(path.join(tmpdir(), "sf-outside-"));
  });
  afterAll(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  it("is the same from the root and from any workspace, so the API and the worker agree", () => {
    const expected = path.join(root, "var/results");
    expect(repositoryPath("var/results", root)).toBe(expected);
    expect(repositoryPath("var/results", path.join(root, "apps/api"))).toBe(expected);
    expect(repositoryPath("var/results", path.join(root, "apps/worker/src"))).toBe(expected);
  });

  it("falls back to the working directory outside a checkout", () => {
    expect(repositoryPath("var/results", outside)).toBe(path.join(outside, "var/results"));
  });

  it("RESULT_DIR: the default is absolute; a given relative path becomes absolute", () => {
    expect(path.isAbsolute(resultDir.parse(undefined))).toBe(true);
    expect(resultDir.parse("rel/dir")).toBe(path.resolve("rel/dir"));
    expect(resultDir.parse("/data/results")).toBe("/data/results");
  });
});
