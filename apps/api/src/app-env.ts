import type { Logger } from "pino";
import { Unauthorized } from "@studyflow/domain/errors";
import type { Context } from "hono";
import type { ManagementPrincipal, ParticipantPrincipal } from "./auth/principals";

/** A request's body as JSON: parsed, blank, or not JSON (`text` is what arrived). */
export type RequestJson =
  | { readonly kind: "json"; readonly value: unknown; readonly text: string }
  | { readonly kind: "blank"; readonly text: string }
  | { readonly kind: "invalid"; readonly text: string };

/** Per-request variables set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The client's address (see client-address.ts), set for every request. */
    clientAddress?: string;
    /** TRUST_PROXY, for clientAddress() to find the client when a route asks. */
    trustedProxies?: number;
    /** PARTICIPANT_APP_ADDRESSES: clients whose requests per-address rate limits do not count. */
    participantAppAddresses?: ReadonlySet<string>;
    /** The process's logger; loggerOf(c) gives it with the request id. */
    baseLogger: Logger;
    requestLogger?: Logger;
    management?: ManagementPrincipal;
    participant?: ParticipantPrincipal;
    /** The body parsed once (middleware/request-json.ts), shared by every reader of the request. */
    requestJson?: RequestJson;
  };
}

/** The management caller; the auth middleware of the route group guarantees it is set. */
export function managementOf(c: Context<AppEnv>): ManagementPrincipal {
  const principal = c.get("management");
  if (!principal) throw new Unauthorized();
  return principal;
}

export function participantOf(c: Context<AppEnv>): ParticipantPrincipal {
  const principal = c.get("participant");
  if (!principal) throw new Unauthorized();
  return principal;
}

/**
 * The logger of this request: the process's, with the request id bound. Made when first asked
 * for (a failing request, a warning), not for every request: the request line itself binds the id
 * inline.
 */
export function loggerOf(c: Context<AppEnv>): Logger {
  let logger = c.get("requestLogger");
  if (!logger) {
    logger = c.get("baseLogger").child({ requestId: c.get("requestId") });
    c.set("requestLogger", logger);
  }
  return logger;
}
