import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PASSWORD_MIN_CHARACTERS,
  PASSWORD_RULE_DESCRIPTION,
  checkPasswordRule,
} from "@studyflow/domain/participant-accounts";
import { createTestApp, type TestApp } from "./test-app";

/*
 * The HTML pages the API serves to people (/reset-password, /console, /docs): none may be framed
 * by another page, and the reset page states the password rule the API applies.
 */

/** A Content-Security-Policy as directive name → its sources. */
function directivesOf(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((directive) => directive.trim())
      .filter((directive) => directive !== "")
      .map((directive) => {
        const [name = "", ...values] = directive.split(/\s+/);
        return [name, values] as const;
      }),
  );
}

const hashOf = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

describe("HTML pages of the API", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(["/reset-password?token=abc", "/console", "/docs"])("%s may not be framed by any page", async (path) => {
    const res = await t.app.request(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const policy = directivesOf(res.headers.get("content-security-policy") ?? "");
    expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(policy.get("default-src")).toEqual(["'none'"]);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("/reset-password runs only its own inline script and style, posts no form, leaks no token", async () => {
    const res = await t.app.request("/reset-password?token=abc");
    const html = await res.text();
    const policy = directivesOf(res.headers.get("content-security-policy") ?? "");
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1];
    expect(script).toContain('fetch("/v1/password-reset/reset"');
    // the hashes of exactly the page's inline code: no 'unsafe-inline', nothing else allowed
    expect(policy.get("script-src")).toEqual([hashOf(script!)]);
    expect(policy.get("style-src")).toEqual([hashOf(style!)]);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.match(/<style/g)).toHaveLength(1);
    expect(html).not.toMatch(/\son\w+=/i);
    expect(policy.get("connect-src")).toEqual(["'self'"]);
    expect(policy.get("form-action")).toEqual(["'none'"]);
    expect(policy.get("base-uri")).toEqual(["'none'"]);
    expect(res.headers.get("content-security-policy")).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });

  it("/reset-password states the password policy the API applies", async () => {
    const html = await (await t.app.request("/reset-password")).text();
    const rule = /<p id="rule">([^<]*)<\/p>/.exec(html)?.[1] ?? "";
    expect(rule).toBe(PASSWORD_RULE_DESCRIPTION);
    expect(rule).toContain(`at least ${PASSWORD_MIN_CHARACTERS} characters`);
    expect(rule).toMatch(/no mix of letters, digits or symbols is required/);
    expect(rule).toMatch(/common or leaked passwords/);
    expect(html).not.toMatch(/12 characters|three of/);
    expect(html).toContain(`minlength="${PASSWORD_MIN_CHARACTERS}"`);

    // what it names as refused, the policy refuses; what it allows, the policy takes
    const examples = [...rule.matchAll(/\(([^)]+)\)/g)].flatMap((match) => match[1]!.split(", "));
    expect(examples).toEqual(expect.arrayContaining(["12345678", "abcdefgh", "aaaaaaaa"]));
    for (const refused of [...examples, "password"]) expect(checkPasswordRule(refused), refused).not.toBeNull();
    expect(checkPasswordRule("a".repeat(PASSWORD_MIN_CHARACTERS - 1))).not.toBeNull();
    // no composition rule: lower-case words alone will do
    expect(checkPasswordRule("lantern harbour meadow")).toBeNull();
  });
});
