import type { Logger } from "pino";

/** Per-request variables set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
  };
}
