import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managementToken } from "./fixtures";
import { createTestApp, type TestApp } from "./test-app";

const ASSETS = fileURLToPath(new URL("../src/console/assets/", import.meta.url));

/** The page and asset routes of the browser console; its data calls are the JSON API's. */
describe("console pages and assets", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("serves the page with a strict content security policy and the usual protective headers", async () => {
    const res = await t.app.request("/console");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    const policy = Object.fromEntries(
      (res.headers.get("content-security-policy") ?? "").split(";").map((directive) => {
        const [name, ...values] = directive.trim().split(/\s+/);
        return [name, values.join(" ")];
      }),
    );
    expect(policy).toEqual({
      "default-src": "'none'",
      "script-src": "'self'",
      "style-src": "'self'",
      "connect-src": "'self'",
      "img-src": "'self'",
      "base-uri": "'none'",
      "form-action": "'none'",
      "frame-ancestors": "'none'",
      "require-trusted-types-for": "'script'",
      "trusted-types": "'none'",
    });
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-cache");
  });

  it("sends /console/ to /console", async () => {
    const res = await t.app.request("/console/");
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("/console");
  });

  it("has no inline script or style, and reflects nothing of the request (no token ends up in the HTML)", async () => {
    const token = await managementToken(t, "researcher-in-the-url", true);
    const res = await t.app.request(`/console?token=${token}`, { headers: { Authorization: `Bearer ${token}` } });
    const html = await res.text();
    expect(html).not.toContain(token);
    expect(html).not.toContain("researcher-in-the-url");
    expect(html).toBe(await (await t.app.request("/console")).text());
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes, body]) => [attributes?.trim(), body])).toEqual([
      ['type="module" src="/console/assets/main.js"', ""],
    ]);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it("serves every module the page loads, with its type, and revalidates with an ETag", async () => {
    const seen = new Set<string>();
    const pending = ["main.js", "console.css"];
    while (pending.length > 0) {
      const name = pending.pop()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const res = await t.app.request(`/console/assets/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type"), name).toBe(
        name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
      );
      expect(res.headers.get("content-security-policy"), name).toContain("script-src 'self'");
      const text = await res.text();
      for (const [, imported] of text.matchAll(/^import [^;]*? from "\.\/([^"]+)";$/gm)) pending.push(imported!);
    }
    expect(seen.size).toBeGreaterThan(10);

    const first = await t.app.request("/console/assets/main.js");
    const tag = first.headers.get("etag");
    expect(tag).toBeTruthy();
    const again = await t.app.request("/console/assets/main.js", { headers: { "If-None-Match": tag! } });
    expect(again.status).toBe(304);
  });

  it("answers a JSON 404 for anything else below /console, the folder's other files included", async () => {
    for (const url of [
      "/console/assets/nope.js",
      "/console/assets/tsconfig.json",
      "/console/assets/",
      "/console/assets/index.html",
      "/console/assets/..%2Findex.ts",
      "/console/assets/..%2F..%2Fapp.ts",
      "/console/settings",
    ]) {
      const res = await t.app.request(url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get("content-type"), url).toMatch(/^application\/json/);
      expect(Object.keys(await res.json()), url).toEqual(["error"]);
    }
    expect(await (await t.app.request("/console/assets/nope.js")).json()).toEqual({
      error: 'no console asset named "nope.js"',
    });
  });

  it("stays out of the API document", async () => {
    const doc = (await (await t.app.request("/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((route) => route.startsWith("/console"))).toEqual([]);
  });
});

describe("console browser modules", () => {
  it("never write HTML strings into the page: the DOM is built from text", async () => {
    for (const name of (await readdir(ASSETS)).filter((file) => file.endsWith(".js"))) {
      const code = await readFile(path.join(ASSETS, name), "utf8");
      expect(code, name).not.toMatch(
        /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      );
    }
  });

  it("type-check against the DOM's declarations (// @ts-check, the folder's tsconfig.json)", async () => {
    const files = (await readdir(ASSETS)).filter((file) => file.endsWith(".js"));
    for (const name of files) {
      expect((await readFile(path.join(ASSETS, name), "utf8")).startsWith("// @ts-check\n"), name).toBe(true);
    }
    const configFile = path.join(ASSETS, "tsconfig.json");
    const { config, error } = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
    expect(error).toBeUndefined();
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ASSETS);
    expect(parsed.fileNames.map((file) => path.basename(file)).sort()).toEqual([...files].sort());
    const program = ts.createProgram(parsed.fileNames, parsed.options);
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file
        ? `${path.basename(diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
        : "";
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    });
    expect(problems).toEqual([]);
  });
});
