/**
 * A counting TCP proxy in front of PostgreSQL for the API load benchmark (api-bench.ts): it reads
 * the frontend messages its clients send (PostgreSQL protocol 3) and counts what they cost the
 * database:
 *
 *   roundTrips       the times a client spoke again after the server had answered it (pipelined
 *                    statements count once; a new connection's handshake counts too)
 *   syncs            extended-protocol Syncs (a statement described first sends two)
 *   simpleQueries    simple-protocol Query messages (text sent and parsed every time)
 *   parsedUnnamed    Parse of the unnamed statement: the statement is parsed (and planned) for
 *                    this execution only
 *   parsedNamed      Parse of a named (prepared) statement: once per statement and connection
 *   describes        Describe of a statement: postgres.js and drizzle ask before a first execution
 *   executes         Execute messages: statements run through the extended protocol
 *
 * Counting is per message, so a request's figure is the difference over a run divided by the
 * requests the run made.
 */
import { startTcpProxy } from "@studyflow/testkit";

export interface WireCounts {
  roundTrips: number;
  syncs: number;
  simpleQueries: number;
  parsedUnnamed: number;
  parsedNamed: number;
  describes: number;
  executes: number;
  /** Connections the clients opened. */
  connections: number;
  /** Each statement run (bound, or sent as a simple query), by its text, with how many times. */
  texts: Map<string, number>;
}

export const emptyWireCounts = (): WireCounts => ({
  roundTrips: 0,
  syncs: 0,
  simpleQueries: 0,
  parsedUnnamed: 0,
  parsedNamed: 0,
  describes: 0,
  executes: 0,
  connections: 0,
  texts: new Map(),
});

const textOf = (body: Buffer, from: number) => body.toString("utf8", from, body.indexOf(0, from));

export interface CountingProxy {
  port: number;
  /** The counts since the last call, and starts counting again from zero. */
  take: () => WireCounts;
  close: () => Promise<void>;
}

/** SSLRequest and GSSENCRequest codes: a client asks, the server answers one byte, the client goes on. */
const NEGOTIATION_CODES = new Set([80_877_103, 80_877_104]);

/**
 * Reads one client's frontend messages as they arrive, in whatever pieces TCP delivers them, and
 * counts them into the counts `current` gives (take() starts new ones).
 */
function frontendReader(current: () => WireCounts) {
  let pending: Buffer = Buffer.alloc(0);
  let started = false;
  // this connection's statements by name ("" the unnamed one), to name the statements it binds
  const statements = new Map<string, string>();
  return (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        // the startup message (or an SSL/GSS request before it) has no type byte
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        if (!NEGOTIATION_CODES.has(code)) started = true;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const type = String.fromCharCode(pending[0]!);
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const body = pending.subarray(5, 1 + length);
      const counts = current();
      if (type === "P") {
        // Parse: the statement's name first, "" for the unnamed one, then its text
        if (body[0] === 0) counts.parsedUnnamed += 1;
        else counts.parsedNamed += 1;
        statements.set(textOf(body, 0), textOf(body, body.indexOf(0) + 1));
      } else if (type === "B") {
        // Bind: the portal's name, then the statement's
        const name = textOf(body, body.indexOf(0) + 1);
        const text = `${name === "" ? "" : "(prepared) "}${statements.get(name) ?? "?"}`;
        counts.texts.set(text, (counts.texts.get(text) ?? 0) + 1);
      } else if (type === "D") {
        if (body[0] === "S".charCodeAt(0)) counts.describes += 1;
      } else if (type === "E") counts.executes += 1;
      else if (type === "S") counts.syncs += 1;
      else if (type === "Q") {
        counts.simpleQueries += 1;
        const text = textOf(body, 0);
        counts.texts.set(text, (counts.texts.get(text) ?? 0) + 1);
      }
      pending = pending.subarray(1 + length);
    }
  };
}

/** Starts the proxy on a free port of 127.0.0.1, forwarding to `targetHost`:`targetPort`. */
export async function startCountingProxy(targetHost: string, targetPort: number): Promise<CountingProxy> {
  let counts = emptyWireCounts();
  const proxy = await startTcpProxy(targetHost, targetPort, {
    noDelay: true,
    watchClient: () => {
      counts.connections += 1;
      const reader = frontendReader(() => counts);
      return (chunk, startsRoundTrip) => {
        if (startsRoundTrip) counts.roundTrips += 1;
        reader(chunk);
      };
    },
  });
  return {
    port: proxy.port,
    take: () => {
      const taken = counts;
      counts = emptyWireCounts();
      return taken;
    },
    close: proxy.close,
  };
}
