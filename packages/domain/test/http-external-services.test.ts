import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ExternalServicesConfigError,
  createHttpExternalServiceCaller,
  loadExternalServicesFile,
  type ExternalServiceConfig,
} from "@studyflow/domain/external";

const run = promisify(execFile);

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A real HTTP service on a free port; each route answers as a test needs. */
async function startService(create: (handler: http.RequestListener) => http.Server | https.Server) {
  const seen: Seen[] = [];
  const server = create((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({
        url: request.url ?? "",
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>,
      });
      const reply = (status: number, text: string) => {
        response.writeHead(status, { "Content-Type": "application/json" });
        response.end(text);
      };
      switch (request.url) {
        case "/svc/ok":
        case "/svc":
          return reply(200, JSON.stringify({ value: 42 }));
        case "/svc/slow":
          return void setTimeout(() => reply(200, "{}"), 2_000);
        case "/svc/error":
          return reply(503, JSON.stringify({ error: "down" }));
        case "/svc/garbage":
          return reply(200, "{not json");
        default:
          return reply(404, "{}");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const service = (overrides: Partial<ExternalServiceConfig> & { url: string }): ExternalServiceConfig => ({
  name: "kits",
  timeout: 5,
  maxConcurrentCalls: 16,
  ...overrides,
});

describe("external services over HTTP", () => {
  let plain: Awaited<ReturnType<typeof startService>>;

  beforeAll(async () => {
    plain = await startService((handler) => http.createServer(handler));
  });
  afterAll(async () => {
    await plain.close();
  });

  it("posts the event body with apiKey and instanceID, sends the Api-Key header, and returns the JSON reply", async () => {
    const caller = createHttpExternalServiceCaller(
      [service({ url: `http://127.0.0.1:${plain.port}/svc`, apiKey: "secret-key" })],
      { instanceId: "studyflow-test" },
    );
    const reply = await caller("kits", "ok", { eventType: "SUBMIT", studyKey: "s", participantState: { flags: {} } });
    caller.close();
    expect(reply).toEqual({ value: 42 });
    const request = plain.seen.at(-1)!;
    expect(request.url).toBe("/svc/ok");
    expect(request.headers["api-key"]).toBe("secret-key");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body).toEqual({
      eventType: "SUBMIT",
      studyKey: "s",
      participantState: { flags: {} },
      apiKey: "secret-key",
      instanceID: "studyflow-test",
    });
  });

  it("calls the configured URL itself when the rule gives no route", async () => {
    const caller = createHttpExternalServiceCaller([service({ url: `http://127.0.0.1:${plain.port}/svc` })], {
      instanceId: "i",
    });
    expect(await caller("kits", "", {})).toEqual({ value: 42 });
    caller.close();
    expect(plain.seen.at(-1)!.url).toBe("/svc");
    expect(plain.seen.at(-1)!.headers["api-key"]).toBeUndefined();
  });

  it("rejects readably on a timeout, a 5xx, malformed JSON, an unreachable host and an unknown service", async () => {
    const caller = createHttpExternalServiceCaller(
      [
        service({ url: `http://127.0.0.1:${plain.port}/svc`, timeout: 0.3 }),
        service({ name: "gone", url: "http://127.0.0.1:1/" }),
      ],
      { instanceId: "i" },
    );
    const started = Date.now();
    await expect(caller("kits", "slow", {})).rejects.toThrow('external service "kits" did not answer within 0.3 s');
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect(caller("kits", "error", {})).rejects.toThrow('external service "kits" answered HTTP 503');
    await expect(caller("kits", "garbage", {})).rejects.toThrow('external service "kits" answered with malformed JSON');
    await expect(caller("gone", "", {})).rejects.toThrow('external service "gone" could not be reached');
    await expect(caller("nobody", "", {})).rejects.toThrow('external service "nobody" is not configured');
    caller.close();
  });

  it("refuses a call at once when the service already has maxConcurrentCalls in flight", async () => {
    const caller = createHttpExternalServiceCaller(
      [service({ url: `http://127.0.0.1:${plain.port}/svc`, maxConcurrentCalls: 2 })],
      { instanceId: "i" },
    );
    const slow = [caller("kits", "slow", {}), caller("kits", "slow", {})];
    await expect(caller("kits", "ok", {})).rejects.toThrow('external service "kits" is busy (2 calls in flight)');
    await Promise.all(slow);
    expect(await caller("kits", "ok", {})).toEqual({ value: 42 });
    caller.close();
  });
});

describe("external services file", () => {
  let dir: string;
  let tlsService: Awaited<ReturnType<typeof startService>>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "sf-external-"));
    // A CA and a server certificate for 127.0.0.1 that it signed, made fresh for this run.
    const openssl = (...args: string[]) => run("openssl", args, { cwd: dir });
    await openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=test-ca",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
    );
    await openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=127.0.0.1",
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
    );
    await writeFile(path.join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
    await openssl(
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      "san.ext",
      "-out",
      "server.pem",
    );
    const { readFile } = await import("node:fs/promises");
    const [key, cert] = await Promise.all([
      readFile(path.join(dir, "server.key"), "utf8"),
      readFile(path.join(dir, "server.pem"), "utf8"),
    ]);
    tlsService = await startService((handler) => https.createServer({ key, cert }, handler));
  });
  afterAll(async () => {
    await tlsService.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("loads YAML with the reference's field names and trusts the CA it names, relative to the file", async () => {
    const file = path.join(dir, "services.yaml");
    await writeFile(
      file,
      [
        "externalServices:",
        "  - name: kits",
        `    url: https://127.0.0.1:${tlsService.port}/svc`,
        "    apiKey: k",
        "    timeout: 2",
        "    mTLSConfig:",
        "      caFile: ca.pem",
      ].join("\n"),
    );
    const services = await loadExternalServicesFile(file);
    expect(services[0]).toMatchObject({ name: "kits", timeout: 2, maxConcurrentCalls: 16 });
    const caller = createHttpExternalServiceCaller(services, { instanceId: "i" });
    expect(await caller("kits", "ok", {})).toEqual({ value: 42 });
    caller.close();

    // Without the CA the same server is not trusted.
    const untrusted = createHttpExternalServiceCaller([{ ...services[0]!, tls: {} }], { instanceId: "i" });
    await expect(untrusted("kits", "ok", {})).rejects.toThrow(/could not be reached/);
    untrusted.close();
  });

  it("loads JSON, and names the field of every mistake", async () => {
    const file = path.join(dir, "services.json");
    await writeFile(file, JSON.stringify({ externalServices: [{ name: "a", url: "http://127.0.0.1:9/x" }] }));
    expect(await loadExternalServicesFile(file)).toEqual([
      { name: "a", url: "http://127.0.0.1:9/x", timeout: 5, maxConcurrentCalls: 16 },
    ]);

    await writeFile(
      file,
      JSON.stringify({
        externalServices: [
          { name: "a", url: "ftp://x", timeout: 300 },
          { name: "b", url: "http://x", mTLSConfig: { certFile: "c.pem" } },
        ],
      }),
    );
    const failure = loadExternalServicesFile(file);
    await expect(failure).rejects.toBeInstanceOf(ExternalServicesConfigError);
    await expect(failure).rejects.toThrow(/externalServices\.0\.url: url must be an http:\/\/ or https:\/\/ URL/);
    await expect(failure).rejects.toThrow(/externalServices\.0\.timeout/);
    await expect(failure).rejects.toThrow(/externalServices\.1\.mTLSConfig: certFile and keyFile go together/);

    await writeFile(
      file,
      JSON.stringify({ externalServices: [{ name: "a", url: "http://x", mTLSConfig: { caFile: "missing.pem" } }] }),
    );
    await expect(loadExternalServicesFile(file)).rejects.toThrow(/cannot read certificate file missing.pem/);
    await expect(loadExternalServicesFile(path.join(dir, "nope.yaml"))).rejects.toThrow(
      /cannot read external services file/,
    );
  });
});
