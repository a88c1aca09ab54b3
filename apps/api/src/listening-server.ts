import { once } from "node:events";
import type { AddressInfo } from "node:net";
import type { ServerType } from "@hono/node-server";

/** A server of the API process once it listens: the main API, the metrics port, the mTLS sign-in. */
export interface ListeningServer {
  server: ServerType;
  /** The port it listens on (the configured one, or the one the system chose for 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish, drops idle keep-alive connections at once. */
  close(): Promise<void>;
}

/** Stops accepting, lets in-flight requests finish, and drops idle keep-alive sockets at once. */
export function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ("closeIdleConnections" in server) server.closeIdleConnections();
  });
}

/** Resolves once `server` listens (rejects when it cannot bind). */
export async function whenListening(server: ServerType): Promise<ListeningServer> {
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port, close: () => closeServer(server) };
}
