import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config";
import { metricsExposure } from "../src/metrics";
import { startApiServer, type ApiServer } from "../src/server";
import { bearer } from "./fixtures";
import { configErrorOf, createTestApp, createTestBackend, type TestApp } from "./test-app";

const TOKEN = "scrape-token-0123456789abcdef-0123456789";
const PRODUCTION_SECRETS = {
  NODE_ENV: "production",
  MANAGEMENT_JWT_SECRET: "m".repeat(40),
  PARTICIPANT_JWT_SECRET: "p".repeat(40),
};

const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

describe("GET /metrics with METRICS_TOKEN on the API's port", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers 401 with a JSON error and a Bearer challenge without the token", async () => {
    const res = await t.app.request("/metrics");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await errorOf(res)).toMatch(/Authorization: Bearer/);
  });

  it("answers 401 to a wrong token, a prefix or extension of the right one, and other schemes", async () => {
    const wrong = [
      bearer("x".repeat(TOKEN.length)),
      bearer(TOKEN.slice(0, -1)),
      bearer(`${TOKEN}0`),
      bearer(TOKEN.toUpperCase()),
      { Authorization: `Basic ${Buffer.from(`prometheus:${TOKEN}`).toString("base64")}` },
      { Authorization: TOKEN },
      { Authorization: "Bearer" },
    ];
    for (const headers of wrong) {
      const res = await t.app.request("/metrics", { headers });
      expect(res.status, headers.Authorization).toBe(401);
      expect(typeof (await errorOf(res))).toBe("string");
    }
    // A management token is not the metrics token either.
    expect((await t.app.request("/metrics", { headers: bearer("a.b.c") })).status).toBe(401);
  });

  it("serves the Prometheus text with the right token", async () => {
    await t.app.request("/healthz");
    for (const scheme of ["Bearer", "bearer"]) {
      const res = await t.app.request("/metrics", { headers: { Authorization: `${scheme} ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(text).toContain("# TYPE studyflow_http_requests_total counter");
      expect(text).toContain('studyflow_http_requests_total{method="GET",route="/healthz",status="200"} 1');
    }
  });

  it("leaves the other routes alone", async () => {
    expect((await t.app.request("/healthz")).status).toBe(200);
    expect((await t.app.request("/openapi.json")).status).toBe(200);
  });
});

describe("GET /metrics without METRICS_PORT or METRICS_TOKEN", () => {
  let development: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    [development, production] = await Promise.all([createTestApp(), createTestApp({ env: PRODUCTION_SECRETS })]);
  });
  afterAll(async () => {
    await Promise.all([development.close(), production.close()]);
  });

  it("is public on the API's port outside production", async () => {
    const res = await development.app.request("/metrics");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("# TYPE studyflow_http_requests_total counter");
  });

  it("is served nowhere in production: the API's port answers 404, token or not", async () => {
    expect(metricsExposure(production.config)).toEqual({ on: "nowhere" });
    const res = await production.app.request("/metrics");
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toBe("no route for GET /metrics");
    expect((await production.app.request("/metrics", { headers: bearer(TOKEN) })).status).toBe(404);
    expect((await production.app.request("/healthz")).status).toBe(200);
  });
});

describe("GET /metrics on its own port (METRICS_PORT), through the API server", () => {
  interface Started {
    api: ApiServer;
    apiUrl: string;
    metricsUrl: string;
    logs: string[];
    cleanup: () => Promise<void>;
  }

  /** The API process as index.ts starts it, on ports the system chooses, over a database of its own. */
  async function startServer(env: Record<string, string>): Promise<Started> {
    const backend = await createTestBackend();
    const config = loadConfig({
      ...backend.env,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      ...env,
    });
    const logs: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(line) });
    const api = startApiServer({ config, logger });
    if (!api.server.listening) await once(api.server, "listening");
    const metricsServer = await api.metricsServer;
    const apiPort = (api.server.address() as AddressInfo).port;
    return {
      api,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      metricsUrl: `http://127.0.0.1:${metricsServer?.port ?? 0}/metrics`,
      logs,
      cleanup: async () => {
        await api.close();
        await backend.drop();
      },
    };
  }

  let open: Started;
  let guarded: Started;
  beforeAll(async () => {
    [open, guarded] = await Promise.all([
      startServer({ METRICS_HOST: "127.0.0.1" }),
      startServer({ METRICS_TOKEN: TOKEN }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([open?.cleanup(), guarded?.cleanup()]);
  });

  it("serves the API's metrics on the admin port, and 404 for /metrics on the public port", async () => {
    expect((await fetch(`${open.apiUrl}/healthz`)).status).toBe(200);
    const publicPort = await fetch(`${open.apiUrl}/metrics`);
    expect(publicPort.status).toBe(404);
    expect(await errorOf(publicPort)).toBe("no route for GET /metrics");

    const res = await fetch(open.metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    // One registry: the public port's requests, counted where the scraper reads them.
    expect(text).toContain('studyflow_http_requests_total{method="GET",route="/healthz",status="200"} 1');
    expect(text).toContain('studyflow_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(open.logs.some((line) => line.includes('"msg":"metrics listening"'))).toBe(true);
  });

  it("the admin port serves /metrics and nothing else", async () => {
    const base = open.metricsUrl.replace(/\/metrics$/, "");
    for (const path of ["/", "/healthz", "/v1/studies", "/metrics/extra"]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await errorOf(res)).toMatch(/^no route for GET /);
    }
    expect((await fetch(open.metricsUrl, { method: "POST" })).status).toBe(404);
  });

  it("with METRICS_TOKEN too, the admin port wants the token as well", async () => {
    const without = await fetch(guarded.metricsUrl);
    expect(without.status).toBe(401);
    expect(without.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(typeof (await errorOf(without))).toBe("string");
    expect((await fetch(guarded.metricsUrl, { headers: bearer(`${TOKEN}x`) })).status).toBe(401);
    const right = await fetch(guarded.metricsUrl, { headers: bearer(TOKEN) });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain("# TYPE studyflow_http_requests_total counter");
    // And the public port still has no /metrics, with the token or without.
    expect((await fetch(`${guarded.apiUrl}/metrics`, { headers: bearer(TOKEN) })).status).toBe(404);
  });

  it("close() closes the admin port with the API's", async () => {
    const started = await startServer({});
    expect((await fetch(started.metricsUrl)).status).toBe(200);
    await started.cleanup();
    await expect(fetch(started.metricsUrl)).rejects.toThrow();
    await expect(fetch(`${started.apiUrl}/healthz`)).rejects.toThrow();
  });
});

describe("the API server in production without METRICS_PORT or METRICS_TOKEN", () => {
  it("says at start that metrics are served nowhere", async () => {
    const backend = await createTestBackend();
    const logs: string[] = [];
    const api = startApiServer({
      config: loadConfig({
        ...backend.env,
        ...PRODUCTION_SECRETS,
        PORT: "0",
        HOST: "127.0.0.1",
      }),
      logger: pino({ level: "info" }, { write: (line: string) => void logs.push(line) }),
    });
    try {
      if (!api.server.listening) await once(api.server, "listening");
      expect(api.metricsServer).toBeUndefined();
      const warning = logs
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((l) => l.level === 40);
      expect(warning?.msg).toMatch(/metrics are served nowhere: set METRICS_PORT .* or METRICS_TOKEN/);
      const port = (api.server.address() as AddressInfo).port;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    } finally {
      await api.close();
      await backend.drop();
    }
  });
});

describe("metrics configuration", () => {
  it("refuses a short METRICS_TOKEN without echoing it, and one with spaces or non-ASCII", () => {
    const message = configErrorOf({ METRICS_TOKEN: "short-secret-token" });
    expect(message).toContain("METRICS_TOKEN: must be at least 32 characters");
    expect(message).not.toContain("short-secret-token");
    expect(configErrorOf({ METRICS_TOKEN: `${"a".repeat(20)} ${"b".repeat(20)}` })).toContain(
      "METRICS_TOKEN: must be printable ASCII without spaces",
    );
    expect(configErrorOf({ METRICS_TOKEN: `${"a".repeat(40)}é` })).toContain("METRICS_TOKEN: must be printable ASCII");
    expect(configErrorOf({ ...PRODUCTION_SECRETS, METRICS_TOKEN: "x".repeat(31) })).toContain(
      "METRICS_TOKEN: must be at least 32 characters",
    );
    expect(loadConfig({ METRICS_TOKEN: TOKEN }).METRICS_TOKEN).toBe(TOKEN);
  });

  it("refuses METRICS_PORT equal to PORT, out of range or not a number, and METRICS_HOST alone", () => {
    expect(configErrorOf({ PORT: "9464", METRICS_PORT: "9464" })).toContain("METRICS_PORT: must differ from PORT");
    expect(configErrorOf({ METRICS_PORT: "8080" })).toContain("METRICS_PORT: must differ from PORT");
    expect(configErrorOf({ METRICS_PORT: "70000" })).toContain("METRICS_PORT");
    expect(configErrorOf({ METRICS_PORT: "metrics" })).toContain("METRICS_PORT: must be a number");
    expect(configErrorOf({ METRICS_HOST: "127.0.0.1" })).toContain("METRICS_HOST: is used only with METRICS_PORT");
  });

  it("decides where /metrics is served", () => {
    expect(metricsExposure(loadConfig({}))).toEqual({ on: "api-port", token: undefined });
    expect(metricsExposure(loadConfig({ METRICS_TOKEN: TOKEN }))).toEqual({ on: "api-port", token: TOKEN });
    expect(metricsExposure(loadConfig({ ...PRODUCTION_SECRETS, METRICS_TOKEN: TOKEN }))).toEqual({
      on: "api-port",
      token: TOKEN,
    });
    expect(metricsExposure(loadConfig({ ...PRODUCTION_SECRETS, METRICS_PORT: "9464" }))).toEqual({
      on: "admin-port",
      port: 9464,
      host: "0.0.0.0",
      token: undefined,
    });
    expect(
      metricsExposure(
        loadConfig({ METRICS_PORT: "9464", METRICS_HOST: "10.0.0.5", HOST: "127.0.0.1", METRICS_TOKEN: TOKEN }),
      ),
    ).toEqual({ on: "admin-port", port: 9464, host: "10.0.0.5", token: TOKEN });
    expect(metricsExposure(loadConfig({ METRICS_PORT: "9464", HOST: "127.0.0.1" }))).toMatchObject({
      host: "127.0.0.1",
    });
    expect(metricsExposure(loadConfig(PRODUCTION_SECRETS))).toEqual({ on: "nowhere" });
  });
});
