import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "@studyflow/api/testing";
import { SCREENSHOT_DIR, startConsoleBrowser, type ConsoleBrowser } from "./browser";

/**
 * The API reference page (/docs) in a closed network: Chromium may reach the API under test and
 * nothing else. The page loads Scalar's viewer from the API itself (the installed package's browser
 * build), renders the operations of /openapi.json, and sends "Test Request" calls to the API; no
 * request aims at another host (the CDN, Scalar's fonts or services), nothing fails on the console.
 */

interface OperationDoc {
  summary?: string;
  tags?: string[];
}

/** The viewer as installed; the API must serve exactly this file. */
const VIEWER_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.resolve("@scalar/api-reference"))),
  "browser",
  "standalone.js",
);

describe("the API reference page", () => {
  let t: TestApp;
  let paths: Record<string, Record<string, OperationDoc>>;

  beforeAll(async () => {
    t = await createTestApp();
    paths = ((await (await t.app.request("/openapi.json")).json()) as { paths: typeof paths }).paths;
  });
  afterAll(async () => {
    await t?.close();
  });

  const viewerAddress = async () => {
    const html = await (await t.app.request("/docs")).text();
    const sources = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((match) => match[1]);
    expect(sources).toHaveLength(1);
    return sources[0] as string;
  };

  it("is a page that names its document and loads its viewer from this origin, under a strict policy", async () => {
    const res = await t.app.request("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain('"url": "/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    expect(await viewerAddress()).toMatch(/^\/docs\/assets\/scalar-api-reference-\d+\.\d+\.\d+[\w.-]*\.js$/);

    const policy = res.headers.get("content-security-policy") ?? "";
    const directives = new Map(
      policy.split(";").map((directive) => {
        const [name = "", ...values] = directive.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get("default-src")).toEqual(["'none'"]);
    expect(directives.get("connect-src")).toEqual(["'self'"]);
    expect(directives.get("font-src")).toEqual(["'self'"]);
    const scriptSources = directives.get("script-src") ?? [];
    expect(scriptSources[0]).toBe("'self'");
    expect(scriptSources.slice(1)).toEqual([expect.stringMatching(/^'nonce-[A-Za-z0-9+/=]{16,}'$/)]);
    // The inline start-up script carries this response's nonce, and a new request gets a new one.
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1] ?? "";
    expect(html).toContain(`<script type="text/javascript" nonce="${nonce}">`);
    const again = (await t.app.request("/docs")).headers.get("content-security-policy");
    expect(again).not.toContain(nonce);
    // Every policy directive names only this origin, data: images or the nonce: no other host.
    expect(policy).not.toMatch(/https?:|\*/);
  });

  it("has one address: /docs/ redirects to /docs", async () => {
    const res = await t.app.request("/docs/");
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("/docs");
  });

  it("serves the installed viewer as JavaScript, gzipped for clients that accept it, cached for good", async () => {
    const address = await viewerAddress();
    const installed = readFileSync(VIEWER_FILE);

    const plain = await t.app.request(address);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await plain.arrayBuffer()).equals(installed)).toBe(true);

    const gzipped = await t.app.request(address, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    const compressed = Buffer.from(await gzipped.arrayBuffer());
    expect(compressed.length).toBeLessThan(installed.length / 2);
    expect(gunzipSync(compressed).equals(installed)).toBe(true);

    // A client that refuses gzip (q=0) gets the plain file.
    const refused = await t.app.request(address, { headers: { "Accept-Encoding": "gzip;q=0, br" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await refused.arrayBuffer()).equals(installed)).toBe(true);
  });

  it("answers 404 with a JSON error for any other asset name", async () => {
    const address = await viewerAddress();
    for (const name of [
      "standalone.js",
      "standalone.js.map",
      `${path.basename(address)}.map`,
      "scalar-api-reference-0.0.0.js",
      "..%2F..%2Fpackage.json",
      "index.html",
    ]) {
      const res = await t.app.request(`/docs/assets/${name}`);
      expect(res.status, name).toBe(404);
      expect(res.headers.get("content-type"), name).toContain("application/json");
      const body = (await res.json()) as { error: string };
      expect(Object.keys(body), name).toEqual(["error"]);
      expect(body.error, name).toMatch(/^no API reference asset named /);
    }
    // Nothing below the folder, and no way out of it (dot segments end elsewhere, at no route).
    for (const [address, routed] of [
      ["/docs/assets/chunks/index.js", "/docs/assets/chunks/index.js"],
      ["/docs/assets/%2e%2e/%2e%2e/package.json", "/package.json"],
    ] as const) {
      const res = await t.app.request(address);
      expect(res.status, address).toBe(404);
      expect(await res.json(), address).toEqual({ error: `no route for GET ${routed}` });
    }
  });

  describe("in Chromium that may reach only the API", () => {
    let ui: ConsoleBrowser;
    let page: Page;
    /** Every request the page made, and those aimed elsewhere (aborted). */
    const requested: string[] = [];
    const leaving: string[] = [];
    const consoleErrors: string[] = [];

    beforeAll(async () => {
      ui = await startConsoleBrowser(t.app.fetch, { timeoutMs: 20_000 });
      page = ui.page;
      const origin = new URL(ui.base).origin;
      await page.route("**/*", async (route) => {
        const url = route.request().url();
        requested.push(url);
        if (new URL(url).origin === origin) return route.continue();
        leaving.push(url);
        return route.abort("blockedbyclient");
      });
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      page.on("pageerror", (error) => consoleErrors.push(`uncaught: ${error.message}`));
    });
    afterAll(async () => {
      await ui?.close();
    });

    /** Opens an operation of the document by its address on the page and returns its summary. */
    const openOperation = async (method: string, template: string): Promise<string> => {
      const operation = paths[template]?.[method.toLowerCase()];
      const summary = operation?.summary ?? "";
      const tag = operation?.tags?.[0] ?? "";
      expect(summary, `${method} ${template}`).not.toBe("");
      // Scalar addresses an operation as #tag/<tag slug>/<METHOD><path>; these tags are their own slugs.
      expect(tag).toMatch(/^[a-z-]+$/);
      await page.goto(`${ui.base}/docs#tag/${tag}/${method}${template}`);
      await expect.poll(() => page.getByRole("heading", { name: summary, exact: true }).isVisible()).toBe(true);
      return summary;
    };

    it("renders the operations of /openapi.json with nothing from another host", async () => {
      await page.goto(`${ui.base}/docs`);
      const first = Object.values(paths["/healthz"] ?? {})[0]?.summary ?? "";
      await page.getByRole("heading", { name: first, exact: true }).waitFor();

      const shown = [
        await openOperation("POST", "/v1/studies/{studyKey}/participants/{participantID}/responses"),
        await openOperation("POST", "/v1/studies/{studyKey}/run-actions/participants/"),
        await openOperation("GET", "/v1/studies/{studyKey}/run-actions/participants/task/{taskID}"),
      ];
      expect(shown).toEqual([
        "Submit a survey response on behalf of a participant",
        "Run rule actions on every participant of a study (background task)",
        "Status and progress of a bulk task: a run-actions task or a timer tick",
      ]);
      // The sidebar lists them too (the open tags).
      for (const summary of shown.slice(1)) {
        await expect.poll(() => page.getByRole("link", { name: summary }).first().isVisible()).toBe(true);
      }
      // No link to Scalar's hosted client, which would be handed this document's address.
      expect(await page.getByText("Open API Client").count()).toBe(0);
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, "api-docs.png") });

      const origin = new URL(ui.base).origin;
      expect(leaving).toEqual([]);
      expect(requested).toContain(`${origin}${await viewerAddress()}`);
      expect(requested).toContain(`${origin}/openapi.json`);
      expect(consoleErrors).toEqual([]);
      expect(ui.policyViolations).toEqual([]);
    });

    it("sends Test Request calls to this API", async () => {
      await openOperation("GET", "/healthz");
      const before = requested.length;
      await page.getByRole("button", { name: "Test Request" }).first().click();
      await page.getByRole("button", { name: /^Send/ }).first().click();
      await page.getByText("200 OK").first().waitFor();
      expect(requested.slice(before)).toEqual([`${new URL(ui.base).origin}/healthz`]);
      expect(leaving).toEqual([]);
      expect(consoleErrors).toEqual([]);
      expect(ui.policyViolations).toEqual([]);
    });
  });
});
