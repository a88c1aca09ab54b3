import type { Context } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";

/** Long enough for any IPv6 text form; a forged header cannot make rate-limit keys huge. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The client's address, as the key of per-client rate limits. The first X-Forwarded-For entry
 * is the client as seen by the reverse proxy in front of the API; the proxy must overwrite the
 * header, or clients could pick their own bucket. Without the header (direct connections)
 * the socket's peer is used; without a Node socket (in-process requests in tests) every
 * caller shares one "unknown" bucket.
 */
export function clientAddress(c: Context): string {
  const forwarded = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
  if (forwarded) return forwarded.slice(0, MAX_ADDRESS_LENGTH);
  try {
    const address = getConnInfo(c).remote.address;
    if (address) return address;
  } catch {
    // Not served by @hono/node-server: there is no socket to ask.
  }
  return "unknown";
}
