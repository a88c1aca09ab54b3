import { connect, createServer, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  /** Closes every connection and refuses new ones, as a stopped server would. */
  down: () => Promise<void>;
  /** Accepts connections again, on the same port. */
  up: () => Promise<void>;
  /** Resets (RST) every connection through the proxy and keeps accepting new ones. */
  reset: () => void;
  /**
   * Round trips since the last call: the times a client connection spoke again after the service
   * had answered it. For PostgreSQL, one per statement a client waits for (pipelined ones count
   * once), plus the handshake of each new connection.
   */
  takeRoundTrips: () => number;
  close: () => Promise<void>;
}

export interface TcpProxyOptions {
  /** TCP_NODELAY on both sides of every connection, so the proxy adds no Nagle delay to a timing. */
  noDelay?: boolean;
  /**
   * Called for each new connection; the function it returns sees every chunk that connection's
   * client sends, and whether the chunk starts a round trip (see takeRoundTrips).
   */
  watchClient?: () => (chunk: Buffer, startsRoundTrip: boolean) => void;
}

/**
 * A TCP proxy in front of a service, so a test can take the service away from one process (its
 * connections reset, new ones refused) without touching the service every other test shares.
 */
export async function startTcpProxy(
  targetHost: string,
  targetPort: number,
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let roundTrips = 0;
  const server = createServer((client) => {
    const watch = options.watchClient?.();
    const upstream = connect(targetPort, targetHost);
    if (options.noDelay) {
      client.setNoDelay(true);
      upstream.setNoDelay(true);
    }
    let serviceSpokeLast = true;
    client.on("data", (chunk: Buffer) => {
      const startsRoundTrip = serviceSpokeLast;
      if (startsRoundTrip) roundTrips += 1;
      serviceSpokeLast = false;
      watch?.(chunk, startsRoundTrip);
    });
    upstream.on("data", () => {
      serviceSpokeLast = true;
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as { port: number };
  const down = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  return {
    port,
    down,
    up: () => listen(port),
    reset: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    takeRoundTrips: () => {
      const taken = roundTrips;
      roundTrips = 0;
      return taken;
    },
    close: async () => {
      if (server.listening) await down();
    },
  };
}
