import { readFile } from "node:fs/promises";
import { createServer } from "node:https";
import { TLSSocket } from "node:tls";
import { serve, type HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { ApiConfig } from "../config";
import { errorBody } from "../errors";
import { whenListening, type ListeningServer } from "../listening-server";

/** The one route the mTLS listener serves; case-backend's path, with or without a trailing slash. */
const SIGNIN_PATHS: ReadonlySet<string> = new Set(["/v1/auth/signin-with-idp", "/v1/auth/signin-with-idp/"]);

/**
 * The bindings the mTLS listener hands the app: @hono/node-server's, marked with the listener.
 * Only this listener's fetch sets the mark, so no request of the main listener can carry it.
 */
interface SignInListenerBindings extends HttpBindings {
  signInListener: "mtls";
}

/**
 * Whether this request came over the mTLS sign-in listener with a client certificate the TLS
 * layer verified against MANAGEMENT_IDP_SIGNIN_MTLS_CA. On the main listener never: a certificate
 * counts only where the server asked for one and checked it.
 */
export function verifiedClientCertificate(c: Context): boolean {
  const env = c.env as Partial<SignInListenerBindings> | undefined;
  if (env?.signInListener !== "mtls") return false;
  const socket = env.incoming?.socket;
  return socket instanceof TLSSocket && socket.authorized;
}

export type SignInTlsSettings = Pick<
  ApiConfig,
  | "HOST"
  | "MANAGEMENT_IDP_SIGNIN_MTLS_PORT"
  | "MANAGEMENT_IDP_SIGNIN_MTLS_CA"
  | "MANAGEMENT_IDP_SIGNIN_MTLS_CERT"
  | "MANAGEMENT_IDP_SIGNIN_MTLS_KEY"
>;

export type SignInMtlsServer = ListeningServer;

async function readPem(name: keyof SignInTlsSettings, file: string | number | undefined): Promise<Buffer> {
  if (typeof file !== "string") throw new Error(`${name}: is required with MANAGEMENT_IDP_SIGNIN_MTLS_PORT`);
  try {
    return await readFile(file);
  } catch (error) {
    const reason = error instanceof Error && "code" in error ? String(error.code) : "unreadable";
    throw new Error(`${name}: cannot read ${file} (${reason})`);
  }
}

/**
 * The TLS listener of case-admin's sign-in (MANAGEMENT_IDP_SIGNIN_MTLS_PORT). It asks every caller
 * for a client certificate and completes the handshake only with one signed by
 * MANAGEMENT_IDP_SIGNIN_MTLS_CA (a missing or foreign one is refused by TLS, before any HTTP), and
 * serves POST /v1/auth/signin-with-idp of `fetch` (the API app) and nothing else: every other
 * request is a 404 here. Resolves once it listens; rejects when a file cannot be read, a PEM is
 * malformed or the port cannot be bound.
 */
export async function startSignInMtlsServer(
  fetch: (request: Request, env: SignInListenerBindings) => Response | Promise<Response>,
  settings: SignInTlsSettings,
): Promise<SignInMtlsServer> {
  const [ca, cert, key] = await Promise.all([
    readPem("MANAGEMENT_IDP_SIGNIN_MTLS_CA", settings.MANAGEMENT_IDP_SIGNIN_MTLS_CA),
    readPem("MANAGEMENT_IDP_SIGNIN_MTLS_CERT", settings.MANAGEMENT_IDP_SIGNIN_MTLS_CERT),
    readPem("MANAGEMENT_IDP_SIGNIN_MTLS_KEY", settings.MANAGEMENT_IDP_SIGNIN_MTLS_KEY),
  ]);
  const server = serve({
    fetch: (request, env) => {
      if (request.method !== "POST" || !SIGNIN_PATHS.has(new URL(request.url).pathname)) {
        const path = new URL(request.url).pathname;
        return Response.json(errorBody(`no route for ${request.method} ${path}`), { status: 404 });
      }
      return fetch(request, { ...(env as HttpBindings), signInListener: "mtls" });
    },
    port: settings.MANAGEMENT_IDP_SIGNIN_MTLS_PORT ?? 0,
    hostname: settings.HOST,
    createServer,
    // createServer throws here on a malformed PEM: the caller's start fails with it.
    serverOptions: { ca, cert, key, requestCert: true, rejectUnauthorized: true },
  });
  return whenListening(server);
}
