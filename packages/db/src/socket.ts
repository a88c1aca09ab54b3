import net from "node:net";

/** What postgres.js hands a socket factory: its parsed connection options. */
interface SocketOptions {
  host: string[];
  port: number[];
  path: string | false;
}

/**
 * A connection opened the way libpq opens one, with Nagle's algorithm off (TCP_NODELAY). postgres.js
 * leaves it on, and every `COPY … FROM STDIN` then ends on a small CopyDone message that waits
 * until the server acknowledges the data before it: about 40 ms per COPY statement (the server's
 * delayed ACK), which made the CASE import's COPYs of 500 rows take twice the time of one long
 * COPY. The socket is returned while it connects: postgres.js queues its first message on it and
 * keeps its own connect timeout, error handling and reconnects, as for a socket of its own.
 */
export function connectNoDelay(options: SocketOptions): net.Socket {
  if (options.path) return net.connect({ path: options.path });
  const host = options.host[0] ?? "localhost";
  const port = options.port[0] ?? 5432;
  const socket = net.connect({ host, port, noDelay: true });
  // what postgres.js reads for TLS (the server name) and its error messages
  Object.assign(socket, { host, port });
  return socket;
}

/**
 * Whether a connection URL names one host: a URL with several (`host1,host2`) keeps postgres.js's
 * own sockets, which try the hosts in turn.
 */
export const isSingleHostUrl = (url: string): boolean => !/^[^/]*\/\/[^/?]*,/.test(url);
