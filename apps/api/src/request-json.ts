import type { Context, HonoRequest } from "hono";
import type { AppEnv, RequestJson } from "./app-env";

const notJson = () => Promise.reject(new SyntaxError("the body is not valid JSON"));

/**
 * Makes `parsed` the body every later reader of this request sees: the shared record and hono's
 * `c.req.json()`, through which the route's validator reads the body (hono parses the body's text
 * again on every `json()` call; the validator takes this parse instead).
 */
function share(c: Context<AppEnv>, parsed: RequestJson): RequestJson {
  c.set("requestJson", parsed);
  c.req.json = (() => (parsed.kind === "json" ? Promise.resolve(parsed.value) : notJson())) as HonoRequest["json"];
  return parsed;
}

/**
 * The request's body parsed as JSON, once per request, whatever its Content-Type: the input
 * boundary, the CASE body reader, a rate limit that validates the body, the idempotency
 * fingerprint and the route's validator all share this one parse. The body must be bounded
 * before (limitBodySize).
 */
export async function requestJson(c: Context<AppEnv>): Promise<RequestJson> {
  const known = c.get("requestJson");
  if (known) return known;
  const text = await c.req.text();
  if (text.trim() === "") return share(c, { kind: "blank", text });
  try {
    return share(c, { kind: "json", value: JSON.parse(text) as unknown, text });
  } catch {
    return share(c, { kind: "invalid", text });
  }
}

/**
 * Replaces the body later readers see with `value` (the CASE body reader's key-matched body), as
 * if it had arrived so as application/json: the route's validator reads JSON bodies of that type
 * only. The request the server received is left as it arrived (a wrapper around the app, an access
 * log, sees what the client sent); the route goes on with a copy of its head. The text is made
 * only for a reader that asks for text (rare).
 */
export function replaceRequestJson(c: Context<AppEnv>, value: unknown): void {
  const headers = new Headers(c.req.raw.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
  let text: string | undefined;
  share(c, {
    kind: "json",
    value,
    get text() {
      return (text ??= JSON.stringify(value));
    },
  });
}
