import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auditLog, managementUsers } from "@studyflow/db";
import { signInProofProblem } from "../src/auth/signin-proof";
import { startSignInMtlsServer } from "../src/auth/signin-mtls-server";
import { loadConfig } from "../src/config";
import { startApiServer, type ApiServer } from "../src/server";
import { createTestBackend, type TestBackend } from "./test-app";

const run = promisify(execFile);

/*
 * case-admin's sign-in over mutual TLS: the API process started as index.ts starts it, with
 * certificates the openssl CLI makes for this test (a CA, the listener's certificate for
 * localhost/127.0.0.1, a client certificate of that CA, and one of another CA).
 */

interface Pem {
  cert: Buffer;
  key: Buffer;
}

async function openssl(dir: string, ...args: string[]) {
  await run("openssl", args, { cwd: dir });
}

/** A self-signed CA: `<name>.pem` and `<name>.key` in `dir`. */
async function makeCa(dir: string, name: string) {
  await openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
}

/** A leaf certificate signed by CA `ca`, with the extensions given (one per line). */
async function makeLeaf(dir: string, name: string, ca: string, extensions: string[]): Promise<Pem> {
  await writeFile(path.join(dir, `${name}.ext`), `${extensions.join("\n")}\n`);
  await openssl(
    dir,
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${name}`,
  );
  await openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  );
  return {
    cert: await readFile(path.join(dir, `${name}.pem`)),
    key: await readFile(path.join(dir, `${name}.key`)),
  };
}

interface Answer {
  status: number;
  body: unknown;
}

/** One HTTPS request to the mTLS listener; rejects when TLS refuses the connection. */
function tlsCall(
  port: number,
  options: {
    ca: Buffer;
    client?: Pem;
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        servername: "localhost",
        port,
        method: options.method ?? "POST",
        path: options.path ?? "/v1/auth/signin-with-idp",
        ca: options.ca,
        ...(options.client ? { cert: options.client.cert, key: options.client.key } : {}),
        headers: { "content-type": "application/json", ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, body: text === "" ? null : (JSON.parse(text) as unknown) });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const signInBody = (sub: string) =>
  JSON.stringify({
    instanceId: "studyflow",
    sub,
    name: `Name ${sub}`,
    email: `${sub}@example.org`,
    imageURL: "",
    provider: "ms-entra-id",
    roles: [],
    renewToken: `refresh-${sub}`,
  });

describe("case-admin's sign-in over mutual TLS (MANAGEMENT_IDP_SIGNIN_MTLS_*)", () => {
  let dir: string;
  let ca: Buffer;
  let client: Pem;
  let stranger: Pem;
  let backend: TestBackend;
  let api: ApiServer;
  let mainUrl: string;
  let mtlsPort: number;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "studyflow-mtls-"));
    await Promise.all([makeCa(dir, "ca"), makeCa(dir, "other-ca")]);
    [, client, stranger] = await Promise.all([
      makeLeaf(dir, "server", "ca", [
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "extendedKeyUsage=serverAuth",
        "keyUsage=critical,digitalSignature",
      ]),
      makeLeaf(dir, "case-admin", "ca", ["extendedKeyUsage=clientAuth", "keyUsage=critical,digitalSignature"]),
      makeLeaf(dir, "intruder", "other-ca", ["extendedKeyUsage=clientAuth", "keyUsage=critical,digitalSignature"]),
    ]);
    ca = await readFile(path.join(dir, "ca.pem"));
    backend = await createTestBackend();
    env = {
      ...backend.env,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      MANAGEMENT_IDP_SIGNIN_MTLS_PORT: "0",
      MANAGEMENT_IDP_SIGNIN_MTLS_CA: path.join(dir, "ca.pem"),
      MANAGEMENT_IDP_SIGNIN_MTLS_CERT: path.join(dir, "server.pem"),
      MANAGEMENT_IDP_SIGNIN_MTLS_KEY: path.join(dir, "server.key"),
    };
    api = startApiServer({ config: loadConfig(env), logger: pino({ level: "silent" }) });
    if (!api.server.listening) await once(api.server, "listening");
    mainUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const signIn = await api.signInServer;
    mtlsPort = signIn?.port ?? 0;
  });
  afterAll(async () => {
    await api?.close();
    await backend?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const userOf = async (sub: string) =>
    (await backend.database.db.select().from(managementUsers).where(eq(managementUsers.sub, sub)))[0];

  it("signs in a caller whose client certificate the CA signed: case-backend's answer, the user, the audit", async () => {
    const answer = await tlsCall(mtlsPort, { ca, client, body: signInBody("mtls-1") });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      accessToken: expect.any(String) as string,
      sessionID: expect.any(String) as string,
      expiresAt: expect.any(Number) as number,
      isAdmin: false,
    });
    const user = await userOf("mtls-1");
    expect(user?.email).toBe("mtls-1@example.org");
    const audits = await backend.database.db.select().from(auditLog).where(eq(auditLog.action, "session.signin"));
    expect(audits.map((row) => row.actor)).toEqual([user?.id]);
    // The token answered is a working management token on the main listener.
    const { accessToken } = answer.body as { accessToken: string };
    const permissions = await fetch(`${mainUrl}/v1/auth/permissions`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    expect(permissions.status).toBe(200);
    // The trailing-slash form case-backend also serves, and a bad body still is a 400.
    expect(
      (await tlsCall(mtlsPort, { ca, client, path: "/v1/auth/signin-with-idp/", body: signInBody("mtls-2") })).status,
    ).toBe(200);
    const invalid = await tlsCall(mtlsPort, { ca, client, body: JSON.stringify({ sub: "" }) });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ error: expect.any(String) as string });
  });

  it("refuses the TLS handshake to a certificate of another CA, and to a caller without one; nothing written", async () => {
    const server = (await api.signInServer)?.server;
    const handshakeErrors: string[] = [];
    const record = (error: Error) => handshakeErrors.push(error.message);
    server?.on("tlsClientError", record);
    // No HTTP answer at all: TLS drops the connection (a foreign certificate once the handshake
    // checked it, no certificate with the "certificate required" alert) before a request is read.
    await expect(tlsCall(mtlsPort, { ca, client: stranger, body: signInBody("intruder") })).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
    await expect(tlsCall(mtlsPort, { ca, body: signInBody("anonymous") })).rejects.toThrow(
      /certificate required|socket hang up|ECONNRESET/,
    );
    await vi.waitFor(() => expect(handshakeErrors).toHaveLength(2));
    server?.off("tlsClientError", record);
    expect(handshakeErrors.some((message) => message.includes("peer did not return a certificate"))).toBe(true);
    expect(await userOf("intruder")).toBeUndefined();
    expect(await userOf("anonymous")).toBeUndefined();
  });

  it("the main listener: no certificate counts there, and without a secret configured it answers 401", async () => {
    for (const headers of [{}, { "X-Signin-Secret": "a".repeat(40) }]) {
      const res = await fetch(`${mainUrl}/v1/auth/signin-with-idp`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: signInBody("main-1"),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: "sign-in with an identity provider is accepted only over mutual TLS on its own port",
      });
    }
    expect(await userOf("main-1")).toBeUndefined();
    // The rest of the API is on the main listener as ever.
    expect((await fetch(`${mainUrl}/healthz`)).status).toBe(200);
  });

  it("serves nothing but POST /v1/auth/signin-with-idp: every other request there is a JSON 404", async () => {
    const others: { method: string; path: string }[] = [
      { method: "GET", path: "/healthz" },
      { method: "GET", path: "/v1/auth/signin-with-idp" },
      { method: "POST", path: "/v1/auth/extend-session" },
      { method: "GET", path: "/v1/auth/permissions" },
      { method: "GET", path: "/openapi.json" },
      { method: "POST", path: "/v1/auth/login-with-email" },
      { method: "POST", path: "/v1/auth/signin-with-idp/x" },
    ];
    for (const { method, path: where } of others) {
      const answer = await tlsCall(mtlsPort, { ca, client, method, path: where, body: "{}" });
      expect(answer, `${method} ${where}`).toEqual({ status: 404, body: { error: `no route for ${method} ${where}` } });
    }
  });

  it("close() closes the mTLS listener with the API's", async () => {
    const other = await createTestBackend();
    const started = startApiServer({
      config: loadConfig({ ...env, ...other.env, PORT: "0", HOST: "127.0.0.1" }),
      logger: pino({ level: "silent" }),
    });
    const port = (await started.signInServer)?.port ?? 0;
    expect((await tlsCall(port, { ca, client, body: signInBody("closing") })).status).toBe(200);
    await started.close();
    await expect(tlsCall(port, { ca, client, body: signInBody("closed") })).rejects.toThrow(/ECONNREFUSED/);
    await other.drop();
  });

  it("does not start with an unreadable or malformed PEM", async () => {
    const settings = loadConfig(env);
    await expect(
      startSignInMtlsServer(() => new Response(), {
        ...settings,
        MANAGEMENT_IDP_SIGNIN_MTLS_CA: path.join(dir, "none.pem"),
      }),
    ).rejects.toThrow(/MANAGEMENT_IDP_SIGNIN_MTLS_CA: cannot read .*none\.pem \(ENOENT\)/);
    await expect(
      startSignInMtlsServer(() => new Response(), {
        ...settings,
        MANAGEMENT_IDP_SIGNIN_MTLS_KEY: path.join(dir, "server.ext"),
      }),
    ).rejects.toThrow();
  });
});

describe("signInProofProblem", () => {
  const secret = "s".repeat(40);
  it("a verified certificate proves the caller only where the mTLS listener is configured", () => {
    expect(
      signInProofProblem(
        { MANAGEMENT_IDP_SIGNIN_MTLS_PORT: 8443, MANAGEMENT_IDP_SIGNIN_SECRET: undefined },
        undefined,
        true,
      ),
    ).toBeNull();
    expect(
      signInProofProblem(
        { MANAGEMENT_IDP_SIGNIN_MTLS_PORT: undefined, MANAGEMENT_IDP_SIGNIN_SECRET: undefined },
        undefined,
        true,
      ),
    ).toBe("sign-in with an identity provider is not enabled on this server");
    expect(
      signInProofProblem(
        { MANAGEMENT_IDP_SIGNIN_MTLS_PORT: undefined, MANAGEMENT_IDP_SIGNIN_SECRET: secret },
        undefined,
        true,
      ),
    ).toBe("X-Signin-Secret header required");
  });
  it("the secret proves the caller on either listener; both configured, either proof suffices", () => {
    const both = { MANAGEMENT_IDP_SIGNIN_MTLS_PORT: 8443, MANAGEMENT_IDP_SIGNIN_SECRET: secret };
    expect(signInProofProblem(both, secret, false)).toBeNull();
    expect(signInProofProblem(both, undefined, true)).toBeNull();
    expect(signInProofProblem(both, `${secret}x`, false)).toBe("X-Signin-Secret not accepted");
  });
});
