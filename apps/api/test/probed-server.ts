import http from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { TestApp } from "./test-app";

/** How long a request whose body is held open may wait for its answer before the test calls it unanswered. */
const HOLD_GUARD_MS = 10_000;

export interface ProbedAnswer {
  status: number;
  body: unknown;
  /** Bytes the client had handed to its socket when the answer's head arrived. */
  sentAtAnswer: number;
  /** Bytes the server had read from this connection (head and body) when it had written its answer. */
  serverRead: number;
}

export interface ProbedServer {
  /**
   * POSTs `chunks` as the socket takes them (honouring backpressure) and stops sending once the
   * answer's head is in. Without a Content-Length header the body goes chunked. With `hold`, the
   * body is never ended: after the last chunk the client only waits, so an answer can come only
   * from what was sent.
   */
  post(path: string, headers: Record<string, string>, chunks: Iterable<Buffer>, hold?: boolean): Promise<ProbedAnswer>;
  close(): Promise<void>;
}

/**
 * The test app over a real socket on an ephemeral port, watching the server's side of each
 * connection: how many bytes it had read when its answer was written. That tells what a route read
 * of a body before it answered, which an in-process request cannot show.
 */
export async function startProbedServer(t: TestApp): Promise<ProbedServer> {
  /** Per probe id (a request header): the server's socket.bytesRead once its answer was written. */
  const serverRead = new Map<string, number>();
  let probes = 0;
  const server = await new Promise<http.Server>((resolve) => {
    const started = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(started as http.Server),
    );
  });
  const { port } = server.address() as AddressInfo;
  // Registered after the app's listener: at "finish" the answer is written and the server has not
  // begun to drain what the client still sends.
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const probe = req.headers["x-probe"];
    if (typeof probe === "string") res.once("finish", () => serverRead.set(probe, req.socket.bytesRead));
  });

  function post(path: string, headers: Record<string, string>, chunks: Iterable<Buffer>, hold = false) {
    const probe = String(++probes);
    return new Promise<ProbedAnswer>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = http.request({
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent: false,
        headers: { ...headers, "x-probe": probe },
      });
      req.on("response", (res) => {
        answered = true;
        const sentAtAnswer = sent;
        const parts: Buffer[] = [];
        res.on("data", (part: Buffer) => parts.push(part));
        res.on("end", () => {
          req.destroy();
          const text = Buffer.concat(parts).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // left as text: the assertion on it shows what came
          }
          resolve({ status: res.statusCode ?? 0, body, sentAtAnswer, serverRead: serverRead.get(probe) ?? -1 });
        });
        res.on("error", reject);
      });
      req.on("error", (error) => {
        if (!answered) reject(error);
      });
      const iterator = chunks[Symbol.iterator]();
      const pump = () => {
        while (!answered) {
          const next = iterator.next();
          if (next.done) {
            if (!hold) return void req.end();
            const guard = setTimeout(() => {
              req.destroy();
              reject(new Error(`no answer while the body was held open after ${sent} bytes`));
            }, HOLD_GUARD_MS);
            req.once("response", () => clearTimeout(guard));
            return;
          }
          sent += next.value.length;
          if (!req.write(next.value)) {
            req.once("drain", pump);
            return;
          }
        }
      };
      pump();
    });
  }

  return {
    post,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
