import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

/** The message of the line every request logs (middleware/request-id.ts). */
export const REQUEST_LINE = "request";

/**
 * Request lines are written together once this many bytes wait. One write per line cost a submit
 * about a tenth of the server's CPU under load (a system call and its completion per request; see
 * docs/benchmarks.md). Under PIPE_BUF (4096), so that each write stays whole on a pipe.
 */
const REQUEST_LINES_BYTES = 2048;
/** The longest a request line waits for others before it is written anyway. */
const REQUEST_LINES_WAIT_MS = 1000;

/**
 * JSON lines to stdout. Request lines wait for each other (at most REQUEST_LINES_BYTES or
 * REQUEST_LINES_WAIT_MS); any other line is written at once, with the request lines before it, so
 * the order is kept. At exit whatever waits is written; a process killed outright (SIGKILL, out of
 * memory) loses the request lines of its last second at most.
 */
export function createLogger(level: string, pretty: boolean): Logger {
  if (pretty) {
    return pino({ level, base: { service: "api" }, transport: { target: "pino-pretty", options: { colorize: true } } });
  }
  const destination = pino.destination({ dest: 1, sync: true, minLength: REQUEST_LINES_BYTES });
  return batchedRequestLines(level, destination, REQUEST_LINES_WAIT_MS);
}

/** What createLogger builds, on a destination of the caller's (a test's). */
export function batchedRequestLines(
  level: string,
  destination: DestinationStream & { flush(): void; flushSync(): void },
  waitMs: number,
): Logger {
  let waiting = false;
  const flush = () => {
    waiting = false;
    destination.flush();
  };
  setInterval(() => {
    if (waiting) flush();
  }, waitMs).unref();
  process.on("exit", () => destination.flushSync());
  return pino(
    {
      level,
      base: { service: "api" },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args);
          if (args[1] === REQUEST_LINE) waiting = true;
          else flush();
        },
      },
    },
    destination,
  );
}
