import { readFileSync } from "node:fs";
import type { TestApp } from "../test-app";
import { bearer } from "../fixtures";

/**
 * Replays case-admin's calls against the test app as case-admin makes them. The calls are those
 * of case-admin-calls.json beside this file: extracted from case-admin's source
 * (case-framework/case-admin@e4fb97c, its `actions/**` and `lib/data/*`; see the issue-27 route
 * map), one entry per call site: the function, method, URL as written in the source (a template
 * literal or a string concatenation), the body expression, and the status check case-admin
 * applies to the answer.
 *
 * case-admin's `fetchCASEManagementAPI` sends a string body with no Content-Type of its own, so
 * fetch labels it `text/plain;charset=UTF-8`, with `Authorization: Bearer <token>`; it reads the
 * answer as JSON whatever the status. Path values go in unencoded, as case-admin's template
 * literals put them.
 */

export interface CaseAdminCall {
  /** case-admin's source file of the call. */
  file: string;
  /** The function making it (unique per method across case-admin, except the two generic export calls). */
  func: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** The URL as the source writes it: `` `/v1/studies/${studyKey}` `` or `'/v1/…/' + id + '/permissions'`. */
  url: string;
  /** The body expression (`JSON.stringify(template)`); "" when the call sends none. */
  body: string;
  /** How case-admin decides the call failed: [operator, status] pairs, e.g. [["!==", "200"]]. */
  status: [string, string][];
  fields: string[];
  returnsBody: boolean;
  returnType: string;
}

export const CASE_ADMIN_CALLS: readonly CaseAdminCall[] = JSON.parse(
  readFileSync(new URL("./case-admin-calls.json", import.meta.url), "utf8"),
) as CaseAdminCall[];

/**
 * The call of case-admin's function `func` (with `method` when the name alone is ambiguous, as
 * for the generic export calls). Throws for an unknown or ambiguous name: a typo must not pass.
 */
export function caseAdminCall(func: string, method?: CaseAdminCall["method"]): CaseAdminCall {
  const found = CASE_ADMIN_CALLS.filter(
    (call) => call.func === func && (method === undefined || call.method === method),
  );
  if (found.length !== 1) {
    throw new Error(`case-admin-calls.json has ${found.length} calls of ${func}${method ? ` (${method})` : ""}`);
  }
  return found[0] as CaseAdminCall;
}

/** The placeholders of a call's URL, by the expression the source writes (`studyKey`, `params.toString()`). */
export function placeholdersOf(call: CaseAdminCall): string[] {
  return urlParts(call.url)
    .filter((part) => part.kind === "expression")
    .map((part) => part.text);
}

type UrlPart = { kind: "literal" | "expression"; text: string };

/** Splits a template literal (`` `…${x}…` ``) or a concatenation (`'…' + x + '…'`) into literal and expression parts. */
function urlParts(url: string): UrlPart[] {
  const source = url.trim();
  if (source.startsWith("`") && source.endsWith("`")) {
    const parts: UrlPart[] = [];
    const pattern = /\$\{([^}]*)\}/g;
    const body = source.slice(1, -1);
    let last = 0;
    for (const match of body.matchAll(pattern)) {
      if (match.index > last) parts.push({ kind: "literal", text: body.slice(last, match.index) });
      parts.push({ kind: "expression", text: (match[1] ?? "").trim() });
      last = match.index + match[0].length;
    }
    if (last < body.length) parts.push({ kind: "literal", text: body.slice(last) });
    return parts;
  }
  return source.split("+").map((piece): UrlPart => {
    const text = piece.trim();
    const quoted = /^(['"])(.*)\1$/.exec(text);
    return quoted ? { kind: "literal", text: quoted[2] ?? "" } : { kind: "expression", text };
  });
}

/** The path case-admin requests: the call's URL with each placeholder replaced by `values[expression]`. */
export function pathOf(call: CaseAdminCall, values: Readonly<Record<string, string | number>>): string {
  return urlParts(call.url)
    .map((part) => {
      if (part.kind === "literal") return part.text;
      const value = values[part.text];
      if (value === undefined) {
        throw new Error(
          `${call.func}: give a value for \${${part.text}} (placeholders: ${placeholdersOf(call).join(", ")})`,
        );
      }
      return String(value);
    })
    .join("");
}

/** Whether case-admin takes an answer with this status as a failure (its `status` checks of the call). */
export function caseAdminSeesFailure(call: CaseAdminCall, status: number): boolean {
  return call.status.some(([operator, value]) => {
    const expected = Number(value);
    switch (operator) {
      case "!==":
      case "!=":
        return status !== expected;
      case ">":
        return status > expected;
      case ">=":
        return status >= expected;
      case "<":
        return status < expected;
      case "===":
      case "==":
        return status === expected;
      default:
        throw new Error(`${call.func}: unknown status check ${operator}`);
    }
  });
}

export interface ReplayOptions {
  /** Values of the URL's placeholders, by the source's expression (see placeholdersOf). */
  params?: Readonly<Record<string, string | number>>;
  /** The value case-admin stringifies as the body; required exactly when the call sends a body. */
  body?: unknown;
  /** Send this raw text as the body instead (a broken body, an empty one). */
  rawBody?: string;
  /** A management token (a management user's, an admin's…); without one the call goes unauthenticated. */
  token?: string;
  headers?: Record<string, string>;
}

export interface ReplayAnswer {
  status: number;
  /** The answer parsed as JSON, or case-admin's fallback `{error: statusText}` when it is not JSON. */
  // each test checks the shape it reads
  body: any;
  /** Whether case-admin would report the call as failed (its status checks). */
  failed: boolean;
  path: string;
}

/** Sends one of case-admin's calls to the test app as case-admin sends it, and reads the answer as it does. */
export async function replayCaseAdminCall(
  t: Pick<TestApp, "app">,
  call: CaseAdminCall,
  options: ReplayOptions = {},
): Promise<ReplayAnswer> {
  const sendsBody = call.body.trim() !== "";
  if (options.rawBody === undefined && sendsBody !== (options.body !== undefined)) {
    throw new Error(
      sendsBody ? `${call.func} sends ${call.body}: give its value as body` : `${call.func} sends no body`,
    );
  }
  const text = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const path = pathOf(call, options.params ?? {});
  const response = await t.app.request(path, {
    method: call.method,
    headers: {
      ...(text === undefined ? {} : { "content-type": "text/plain;charset=UTF-8" }),
      ...(options.token ? bearer(options.token) : {}),
      ...options.headers,
    },
    ...(text === undefined ? {} : { body: text }),
  });
  const raw = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = { error: response.statusText };
  }
  return { status: response.status, body, failed: caseAdminSeesFailure(call, response.status), path };
}
