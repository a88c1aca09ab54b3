import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { AppEnv } from "./app-env";

/** Long enough for any IPv6 text form; a forged header cannot make rate-limit keys huge. */
const MAX_ADDRESS_LENGTH = 64;

function socketAddress(c: Context): string {
  // Not served by @hono/node-server (in-process requests in tests, benches): there is no socket to
  // ask, and getConnInfo would throw (an Error with its stack for every request).
  if ((c.env as { incoming?: unknown } | undefined)?.incoming === undefined) return "unknown";
  try {
    const address = getConnInfo(c).remote.address;
    if (address) return address;
  } catch {
    // a server of another kind
  }
  return "unknown";
}

/**
 * The client's address, the key of per-client rate limits, found once per request that needs it.
 *
 * `trustedProxies` is TRUST_PROXY: how many reverse proxies in front of the API append to
 * X-Forwarded-For. With 0 (the default) the header is ignored, because any client can send it
 * and would otherwise pick its own rate-limit bucket; the socket's peer is the client. With n,
 * the client is the entry the outermost trusted proxy added: the n-th from the end. Entries
 * further left were written by the client and are not believed.
 */
export function resolveClientAddress(trustedProxies: number, participantAppAddresses: readonly string[] = []) {
  const appServers: ReadonlySet<string> = new Set(participantAppAddresses);
  return createMiddleware<AppEnv>(async (c, next) => {
    // Found when a route asks (the rate-limited ones), not on every request.
    c.set("trustedProxies", trustedProxies);
    c.set("participantAppAddresses", appServers);
    await next();
  });
}

export function clientAddress(c: Context<AppEnv>): string {
  const known = c.get("clientAddress");
  if (known !== undefined) return known;
  const trustedProxies = c.get("trustedProxies") ?? 0;
  let address: string | undefined;
  if (trustedProxies > 0) {
    const hops = (c.req.header("x-forwarded-for") ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    address = hops[hops.length - trustedProxies] || undefined;
  }
  // the socket's peer only when no trusted proxy named the client
  const found = (address ?? socketAddress(c)).slice(0, MAX_ADDRESS_LENGTH);
  c.set("clientAddress", found);
  return found;
}

/**
 * The keys of a per-address rate limit: the client's address, with `prefix`, or none for a
 * participant app's server (PARTICIPANT_APP_ADDRESSES), which calls for every participant at once.
 */
export function addressKeys(c: Context<AppEnv>, prefix = ""): string[] {
  const address = clientAddress(c);
  return c.get("participantAppAddresses")?.has(address) ? [] : [`${prefix}${address}`];
}
