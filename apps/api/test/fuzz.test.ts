import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenRevocations } from "@studyflow/db";
import { TOKEN_ISSUER, hmacKey, mintParticipantToken } from "@studyflow/domain/access";
import { MAX_PROFILES_PER_USER } from "@studyflow/domain/participant-accounts";
import { grantPermission } from "@studyflow/domain/study-setup";
import {
  STRONG_PASSWORD,
  call,
  insertParticipant,
  managementToken,
  onEvent,
  participantUser,
  researcher,
  setupStudy,
  str,
} from "./fixtures";
import { MAX_BODY_BYTES } from "../src/middleware/body-size";
import { UPLOAD_FORM_OVERHEAD_BYTES } from "../src/routes/study-service/participant-data/files";
import { createTestApp, type TestApp } from "./test-app";

/*
 * Generated requests against every route of the API (every operation of /openapi.json, plus the
 * pages and endpoints the document leaves out), in classes: NUL characters, lone surrogates and
 * broken percent-encodings, deep nesting, out-of-range numbers, wrong shapes and texts, and
 * tokens. Whatever arrives, the API answers below 500, every 4xx is exactly `{"error": string}`
 * without internals, and — as every request of these properties is invalid, unauthorised or
 * aimed at something absent — no table gains or loses a row. A last property sends well-formed
 * requests that may succeed, and only asks for no 5xx. Every operation that takes a body also gets
 * one a byte over its limit (declared or not, JSON or not), and a few get one streamed far beyond
 * it: a 413 (or the upload's earlier 401/415), read no further than the limit.
 *
 * Each request is drawn as a small recipe (operation, caller, parameters, a conforming body and
 * one mutation), so a shrunk counterexample stays readable; `build` turns it into the request
 * and decides whether it must be refused: the mutation is one the API certainly refuses, or the
 * caller or target cannot succeed. A recipe that could succeed and write is aimed at an absent
 * study instead, so nothing may change; on the participant API, where most writes name no study,
 * at what the route certainly refuses (`retarget`: another instance's sign-up, a wrong password,
 * a profile of no one's, …). The participant API reads JSON whatever the Content-Type (as CASE
 * apps send it), takes Idempotency-Key headers on its event routes and a multipart form for
 * uploads; the recipes draw those too. Rate limits are emptied every few requests, so that their
 * 429s do not stand in for what the routes do.
 */

// ---------------------------------------------------------------------------------------------
// The OpenAPI document, as far as the generators read it

interface JsonSchema {
  $ref?: string;
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
}

interface OpenApiOperation {
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; schema?: JsonSchema }[];
  requestBody?: { description?: string; content?: Record<string, { schema?: JsonSchema }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

type Security = "management" | "participant" | "public";

interface Operation {
  /** `METHOD /template`, e.g. `POST /v1/studies/{studyKey}/participants/{participantID}/responses`. */
  id: string;
  method: string;
  template: string;
  pathParams: Record<string, JsonSchema>;
  query: { name: string; schema: JsonSchema }[];
  body: JsonSchema | null;
  /** A multipart form instead of a JSON body (participant file uploads). */
  form: boolean;
  /** Header parameters (Idempotency-Key on the event routes). */
  headers: { name: string; schema: JsonSchema }[];
  /**
   * The body is read as JSON whatever the Content-Type (apps/api/src/case-compat caseJsonBody, as
   * case-backend's gin does), which its OpenAPI description says.
   */
  caseShaped: boolean;
  security: Security;
}

/** Served, but not part of the API document. */
const UNDOCUMENTED = ["GET /reset-password", "GET /metrics", "GET /docs", "GET /openapi.json", "GET /console"];

function operationsOf(doc: OpenApiDocument): Operation[] {
  const documented = Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]): Operation => {
      const schemes = (operation.security ?? []).flatMap((entry) => Object.keys(entry));
      const security: Security = schemes.includes("managementBearer")
        ? "management"
        : schemes.includes("participantBearer")
          ? "participant"
          : "public";
      const parameters = operation.parameters ?? [];
      return {
        id: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        pathParams: Object.fromEntries(parameters.filter((p) => p.in === "path").map((p) => [p.name, p.schema ?? {}])),
        query: parameters.filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: operation.requestBody?.content?.["application/json"]?.schema ?? null,
        form: operation.requestBody?.content?.["multipart/form-data"] !== undefined,
        headers: parameters.filter((p) => p.in === "header").map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        caseShaped: (operation.requestBody?.description ?? "").includes("whatever the Content-Type"),
        security,
      };
    }),
  );
  const extra = UNDOCUMENTED.map((id): Operation => {
    const [method, template] = id.split(" ") as [string, string];
    return {
      id,
      method,
      template,
      pathParams: {},
      query: [],
      body: null,
      form: false,
      headers: [],
      caseShaped: false,
      security: "public",
    };
  });
  return [...documented, ...extra];
}

const refName = (schema: JsonSchema) => schema.$ref?.split("/").at(-1);

function resolve(schema: JsonSchema, schemas: Record<string, JsonSchema>): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined && hops < 10; hops++) {
    const target = schemas[refName(current) ?? ""];
    if (!target) throw new Error(`unresolvable ${current.$ref}`);
    current = target;
  }
  return current;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** True only where the route's validator certainly refuses `value` (conservative: unknown means false). */
function violates(schema: JsonSchema | undefined, value: unknown): boolean {
  if (!schema) return false;
  if (schema.enum) return !schema.enum.includes(value);
  switch (schema.type) {
    case "string":
      return (
        typeof value !== "string" ||
        value.length < (schema.minLength ?? 0) ||
        value.length > (schema.maxLength ?? Infinity) ||
        (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      );
    case "integer":
      return (
        typeof value !== "number" ||
        !Number.isSafeInteger(value) ||
        value < (schema.minimum ?? -Infinity) ||
        value > (schema.maximum ?? Infinity)
      );
    case "number":
      return (
        typeof value !== "number" ||
        !Number.isFinite(value) ||
        value < (schema.minimum ?? -Infinity) ||
        value > (schema.maximum ?? Infinity)
      );
    case "boolean":
      return typeof value !== "boolean";
    case "array":
      return !Array.isArray(value) || value.length > (schema.maxItems ?? Infinity);
    case "object":
      return !isObject(value) || (schema.required ?? []).some((key) => !Object.hasOwn(value, key));
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Values

/** Odd but well-formed text: no NUL, no lone surrogate, and no words the leak check looks for. */
const ODD_STRINGS = [
  "",
  " ",
  "study-a",
  "p1",
  "null",
  "undefined",
  "true",
  "0",
  "-1",
  "NaN",
  "__proto__",
  "constructor",
  "toString",
  "../../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "<script>alert(1)</script>",
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '"',
  "\\",
  "\\u0000",
  "%00",
  "%ED%A0%80",
  "${7*7}",
  "{{7*7}}",
  "%s%s%n",
  "\u202e\u202d",
  "\ufeff",
  "\u2028\u2029",
  "\r\n",
  "\t",
  "🙂",
  "👩‍👩‍👧‍👦",
  "ﷺ",
  "İstanbul",
  "Straße",
  "a".repeat(201),
  "x@y",
  "2026-11-01T00:00:00Z",
  "00000000-0000-0000-0000-000000000000",
];

/** Instants at and beyond the ends of JavaScript's and PostgreSQL's ranges. */
const EXTREME_INSTANTS = [
  "-271821-04-20T00:00:00.000Z",
  "+275760-09-13T00:00:00.000Z",
  "0000-01-01T00:00:00.000Z",
  "-004714-11-23T00:00:00.000Z",
  "1970-01-01T00:00:00.000Z",
  "9999-12-31T23:59:59.999Z",
];

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const scrub = (text: string) => text.replaceAll("\u0000", "").replace(LONE_SURROGATE, "\ufffd");
const hasBadCharacter = (text: string) => text.includes("\u0000") || new RegExp(LONE_SURROGATE.source).test(text);

const text = (maxLength = 12) =>
  fc
    .oneof(
      { weight: 3, arbitrary: fc.string({ maxLength }) },
      { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength }) },
      { weight: 2, arbitrary: fc.constantFrom(...ODD_STRINGS) },
    )
    .map(scrub);

/** Cuts by code points, so no surrogate pair is split. */
function fitLength(value: string, schema: JsonSchema): string {
  let out = value.padEnd(schema.minLength ?? 0, "x");
  if (schema.maxLength !== undefined) {
    const points = Array.from(out).slice(0, schema.maxLength);
    while (points.join("").length > schema.maxLength) points.pop();
    out = points.join("");
  }
  return out;
}

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === "uuid") return fc.uuid();
  if (schema.format === "email") {
    return fc.oneof(fc.constantFrom("someone@example.org", "no.body+tag@example.com"), fc.emailAddress());
  }
  return text().map((value) => {
    let out = fitLength(value, schema);
    if (schema.pattern !== undefined) {
      const pattern = new RegExp(schema.pattern);
      if (!pattern.test(out)) out = fitLength(out.replace(/[^A-Za-z0-9._-]/g, ""), schema);
      if (!pattern.test(out)) out = "key";
    }
    return out;
  });
}

interface Conformance {
  schemas: Record<string, JsonSchema>;
  /** By property name, wherever it occurs. */
  properties: Record<string, fc.Arbitrary<unknown>>;
  /** By component name. */
  components: Record<string, fc.Arbitrary<unknown>>;
}

/** Values the schema describes; recursion (ResponseItem) stops after a few levels. */
function conforming(schema: JsonSchema, c: Conformance, depth = 0): fc.Arbitrary<unknown> {
  const component = c.components[refName(schema) ?? ""];
  if (component) return component;
  const s = resolve(schema, c.schemas);
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case "string":
      return stringArb(s);
    case "integer":
      return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return depth > 3 ? fc.constant([]) : fc.array(conforming(s.items ?? {}, c, depth + 1), { maxLength: 3 });
    case "object": {
      const required = s.required ?? [];
      const keys = Object.keys(s.properties ?? {}).filter((key) => depth <= 3 || required.includes(key));
      if (keys.length === 0 && typeof s.additionalProperties === "object") {
        return fc.dictionary(text(10), conforming(s.additionalProperties, c, depth + 1), { maxKeys: 3 });
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of keys) model[key] = c.properties[key] ?? conforming(s.properties![key]!, c, depth + 1);
      return fc.record(model, { requiredKeys: required.filter((key) => keys.includes(key)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---------------------------------------------------------------------------------------------
// Positions in a body

type Path = (string | number)[];

interface ValueSite {
  path: Path;
  schema: JsonSchema | undefined;
  value: unknown;
}

interface BodySites {
  values: ValueSite[];
  keys: { path: Path; key: string }[];
  objects: ValueSite[];
}

function walk(body: unknown, schema: JsonSchema | null, schemas: Record<string, JsonSchema>): BodySites {
  const sites: BodySites = { values: [], keys: [], objects: [] };
  const visit = (value: unknown, declared: JsonSchema | undefined, path: Path) => {
    const s = declared ? resolve(declared, schemas) : undefined;
    const site = { path, schema: s, value };
    sites.values.push(site);
    if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, s?.items, [...path, i]));
    } else if (isObject(value)) {
      sites.objects.push(site);
      for (const [key, item] of Object.entries(value)) {
        sites.keys.push({ path, key });
        const child =
          s?.properties?.[key] ?? (typeof s?.additionalProperties === "object" ? s.additionalProperties : undefined);
        visit(item, child, [...path, key]);
      }
    }
  };
  visit(body, schema ?? undefined, []);
  return sites;
}

function getAt(root: unknown, path: Path): unknown {
  let current = root;
  for (const step of path) current = (current as Record<string | number, unknown>)[step];
  return current;
}

/** Sets in place (own data properties, so `__proto__` stays a key) and returns the new root. */
function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = getAt(root, path.slice(0, -1)) as object;
  Object.defineProperty(parent, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return root;
}

function withEntries(root: unknown, path: Path, entries: (object: Record<string, unknown>) => [string, unknown][]) {
  const object = getAt(root, path) as Record<string, unknown>;
  return setAt(root, path, Object.fromEntries(entries(object)));
}

/** Inserts between code points, so no surrogate pair is split (a lone surrogate comes only from `unit`). */
const insertAt = (value: string, at: number, unit: string) => {
  const points = Array.from(value);
  points.splice(at % (points.length + 1), 0, unit);
  return points.join("");
};

function jsonDepth(root: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[root, 0]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (value === null || typeof value !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    for (const item of Object.values(value)) pending.push([item, depth + 1]);
  }
  return deepest;
}

function hasBadText(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string" && hasBadCharacter(value)) return true;
    if (value === null || typeof value !== "object") continue;
    for (const [key, item] of Object.entries(value)) {
      if (hasBadCharacter(key)) return true;
      pending.push(item);
    }
  }
  return false;
}

/**
 * Every body is a JSON object: whatever is no JSON, no object, or breaks the input boundary is
 * refused. A leading BOM is no fault: the UTF-8 decoding of a request body drops it.
 */
function certainlyBadText(body: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.replace(/^\ufeff/, ""));
  } catch {
    return true;
  }
  return !isObject(parsed) || hasBadText(parsed) || jsonDepth(parsed) >= DEEP_MIN;
}

// ---------------------------------------------------------------------------------------------
// Input classes

/** Deep bodies start here: beyond the API's nesting limit (256), and "hundreds to thousands" deep. */
const DEEP_MIN = 300;
const DEEP_MAX = 3_000;

type DeepShape = "array" | "object" | "mixed" | "items" | "rules";

/** Built as text, iteratively: at least `depth` nested containers. */
function deepText(shape: DeepShape, depth: number): string {
  const half = Math.ceil(depth / 2);
  switch (shape) {
    case "array":
      return "[".repeat(depth) + "]".repeat(depth);
    case "object":
      return '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
    case "mixed":
      return '[{"a":'.repeat(half) + "0" + "}]".repeat(half);
    case "items":
      return '{"key":"item","items":['.repeat(half) + '{"key":"leaf","value":"x"}' + "]}".repeat(half);
    case "rules":
      return rulesText(Math.ceil(depth / 3));
  }
}

/** `n` expressions, each the argument of the one around it: three JSON levels per expression. */
function rulesText(n: number): string {
  const leaf = '{"name":"checkEventType","data":[{"dtype":"str","str":"CUSTOM"}]}';
  return '{"name":"not","data":[{"dtype":"exp","exp":'.repeat(n) + leaf + "}]}".repeat(n);
}

const NUMBER_TOKENS = [
  "1e400",
  "-1e400",
  "1e308",
  "-1e308",
  "1.7976931348623157e308",
  "5e-324",
  "1e-400",
  "-0",
  "0.5",
  "1.0",
  "-1",
  "-1700000000",
  "-62135596800",
  "9007199254740993",
  "253402300800",
  "1e21",
  "123456789012345678901234567890",
  "0",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "01",
  ".5",
  "1.",
  "+1",
  "1e",
  '"123"',
  '"1e400"',
  '"-1"',
  '"NaN"',
];

const WRONG_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, "", "x", [], [null], {}, { a: 1 }, [[[]]]];

const PERCENT_SEQUENCES = [
  "%ED%A0%80",
  "%ED%BF%BF",
  "%E0%A4%A",
  "%",
  "%zz",
  "%C0%AF",
  "%F4%90%80%80",
  "%80",
  "%FF",
  "%E2%82",
  "%0",
];

const MALFORMED: ((body: string, cut: number) => string)[] = [
  (body, cut) => body.slice(0, cut % Math.max(body.length, 1)),
  (body) => `${body}x`,
  (body) => body.replace(/}$/, ",}"),
  (body) => body.replaceAll('"', "'"),
  (body) => `\ufeff${body}`,
  () => "{".repeat(10_000),
  () => "[".repeat(100_000),
  () => "undefined",
  () => "NaN",
  () => "{key: 1}",
  (body) => `${body}\u0000`,
  (body) => `/* comment */${body}`,
  () => '{"key":"a\u0001b"}',
  () => "null",
  () => '"just a string"',
  (body) => body + body,
  () => '{"key":"\\ud800"}',
  () => '{"key":"\\u00"}',
  () => '{"key":"\\x41"}',
  () => "[]",
  () => "   ",
  () => '{"a":1,,"b":2}',
];

const CONTENT_TYPES = [
  "text/plain",
  "application/xml",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json;",
  "application/jsonx",
  "json",
  "",
  "application/json, text/plain",
  "text/json",
  "application/vnd.api+json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json; charset=utf-16",
  "application/json-patch+json",
];

/** Operations whose empty body reads as `{}` (case-backend's DELETE /v1/user takes no body). */
const OPTIONAL_BODY = new Set(["DELETE /v1/user"]);

/**
 * Bodies read as JSON whatever their Content-Type: the routes with caseJsonBody (so documented),
 * and the data exporter and explorer, which read theirs so on their own.
 */
const isCaseShaped = (op: Operation) =>
  op.caseShaped || op.template.includes("/data-exporter/") || op.template.includes("/data-explorer/");

/** The participant API as case-backend serves it: every JSON body there is CASE-shaped. */
const PARTICIPANT_API = [
  "/v1/auth/",
  "/v1/password-reset/",
  "/v1/user",
  "/v1/unsubscribe-newsletter",
  "/v1/study-service/",
];

/** @hono/zod-openapi's gate: a body under any other Content-Type is a 415. */
const JSON_REQUEST = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "FOO"];

type Mutation =
  | { kind: "none" }
  | { kind: "nul"; where: number; at: number }
  | { kind: "surrogate"; where: number; at: number; unit: string; noise: boolean }
  | { kind: "percent"; where: number; at: number; seq: string; noise: boolean }
  | { kind: "deep"; where: number; shape: DeepShape; depth: number }
  | { kind: "engineDepth"; where: number; expressions: number }
  | { kind: "number"; where: number; token: string }
  | { kind: "wrongType"; where: number; value: unknown }
  | { kind: "missing"; where: number }
  | { kind: "extra"; where: number; entries: [string, unknown][] }
  | { kind: "empty"; where: number }
  | { kind: "long"; where: number; unit: string; length: number; inPath: boolean }
  | { kind: "malformed"; variant: number; cut: number }
  | { kind: "contentType"; value: string | null }
  | { kind: "emptyBody"; absent: boolean }
  | { kind: "method"; method: string }
  | { kind: "queryNoise"; pairs: [string, string][]; copies: number }
  | { kind: "duplicateKey"; value: unknown };

const nat = fc.nat({ max: 1_000 });

const mutations = {
  nul: fc.record({ kind: fc.constant("nul" as const), where: nat, at: nat }),
  surrogate: fc.record({
    kind: fc.constant("surrogate" as const),
    where: nat,
    at: nat,
    unit: fc.constantFrom("\ud800", "\udfff", "\udbff", "\udc00", "\ud83d"),
    noise: fc.boolean(),
  }),
  percent: fc.record({
    kind: fc.constant("percent" as const),
    where: nat,
    at: nat,
    seq: fc.constantFrom(...PERCENT_SEQUENCES),
    noise: fc.boolean(),
  }),
  deep: fc.record({
    kind: fc.constant("deep" as const),
    where: nat,
    shape: fc.constantFrom<DeepShape>("array", "object", "mixed", "items", "rules"),
    depth: fc.integer({ min: DEEP_MIN, max: DEEP_MAX }),
  }),
  engineDepth: fc.record({
    kind: fc.constant("engineDepth" as const),
    where: nat,
    expressions: fc.integer({ min: 65, max: 84 }),
  }),
  number: fc.record({ kind: fc.constant("number" as const), where: nat, token: fc.constantFrom(...NUMBER_TOKENS) }),
  wrongType: fc.record({
    kind: fc.constant("wrongType" as const),
    where: nat,
    value: fc.constantFrom(...WRONG_VALUES),
  }),
  missing: fc.record({ kind: fc.constant("missing" as const), where: nat }),
  extra: fc.record({
    kind: fc.constant("extra" as const),
    where: nat,
    entries: fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "hasOwnProperty", "", " "), text(10)),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { minLength: 1, maxLength: 5 },
    ),
  }),
  empty: fc.record({ kind: fc.constant("empty" as const), where: nat }),
  long: fc.record({
    kind: fc.constant("long" as const),
    where: nat,
    unit: fc.constantFrom("a", "é", "漢", "\\", '"', "<", " ", "%"),
    length: fc.integer({ min: 1_000, max: 100_000 }),
    inPath: fc.boolean(),
  }),
  malformed: fc.record({
    kind: fc.constant("malformed" as const),
    variant: fc.nat({ max: MALFORMED.length - 1 }),
    cut: nat,
  }),
  contentType: fc.record({
    kind: fc.constant("contentType" as const),
    value: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: null }),
  }),
  emptyBody: fc.record({ kind: fc.constant("emptyBody" as const), absent: fc.boolean() }),
  method: fc.record({ kind: fc.constant("method" as const), method: fc.constantFrom(...METHODS) }),
  queryNoise: fc.record({
    kind: fc.constant("queryNoise" as const),
    pairs: fc.array(fc.tuple(text(20), text(40)), { minLength: 1, maxLength: 5 }),
    copies: fc.integer({ min: 1, max: 300 }),
  }),
  duplicateKey: fc.record({ kind: fc.constant("duplicateKey" as const), value: fc.constantFrom(...WRONG_VALUES) }),
};

// ---------------------------------------------------------------------------------------------
// Callers

interface Caller {
  name: string;
  /** The Authorization header; null: none. */
  header: string | null;
  /** Whose auth middleware lets it through; "invalid": nobody's. */
  kind: "management" | "participant" | "invalid";
  /** A management caller's one grant, or every right. */
  grant?: { study: string; action: string } | "admin";
  /**
   * A genuine, unexpired participant token of an account or token version that has ended: signing
   * out with it is done already (logout answers 200, as case-backend does); every other route refuses it.
   */
  ended?: true;
}

const EXISTING_STUDY = "study-a";
/** The participants of the existing study that take responses (p4's account is deleted). */
const SUBMITTABLE = new Set(["p1", "p2"]);
/** Every participant of the existing study: a researcher reads each of them, a deleted account too. */
const EXISTING_PARTICIPANTS = new Set([...SUBMITTABLE, "p4"]);
/** Where a request that could succeed is sent instead. */
const ABSENT_STUDY = "study-retargeted";
/** A profile id of no one's. */
const ABSENT_PROFILE = "profile-retargeted";

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

async function createCallers(t: TestApp, user: { id: string; tokenVersion: number }, participantToken: string) {
  const db = t.database.db;
  const managementSecret = t.config.MANAGEMENT_JWT_SECRET;
  const participantSecret = t.config.PARTICIPANT_JWT_SECRET;
  const now = Math.floor(Date.now() / 1000);
  const base = { iss: TOKEN_ISSUER, iat: now, exp: now + 3_600 };
  const sign = async (payload: Record<string, unknown>, secret: string, alg = "HS256") => {
    try {
      return await new SignJWT(payload).setProtectedHeader({ alg, typ: "JWT" }).sign(hmacKey(secret));
    } catch {
      return `${b64({ alg, typ: "JWT" })}.${b64(payload)}.c2lnbmF0dXJl`;
    }
  };
  const admin = await managementToken(t, "root", true);
  const callers: Caller[] = [
    { name: "admin", header: `Bearer ${admin}`, kind: "management", grant: "admin" },
    { name: "admin (lower-case scheme)", header: `bearer ${admin}`, kind: "management", grant: "admin" },
    { name: "participant", header: `Bearer ${participantToken}`, kind: "participant" },
    { name: "participant (tab)", header: `Bearer\t${participantToken}`, kind: "participant" },
    { name: "none", header: null, kind: "invalid" },
    { name: "scheme only", header: "Bearer", kind: "invalid" },
    { name: "basic", header: "Basic cm9vdDpyb290", kind: "invalid" },
    { name: "not a token", header: "Bearer not-a-token", kind: "invalid" },
    { name: "three dots", header: "Bearer a.b.c", kind: "invalid" },
    { name: "two tokens", header: `Bearer ${admin} ${admin}`, kind: "invalid" },
    { name: "huge", header: `Bearer ${"A".repeat(50_000)}`, kind: "invalid" },
    { name: "truncated", header: `Bearer ${admin.slice(0, -5)}`, kind: "invalid" },
    {
      name: "alg none",
      header: `Bearer ${b64({ alg: "none", typ: "JWT" })}.${b64({ ...base, sub: "root", typ: "management", admin: true })}.`,
      kind: "invalid",
    },
    {
      name: "tampered payload",
      header: `Bearer ${admin.split(".")[0]}.${b64({ ...base, sub: "root", typ: "management", admin: true, x: 1 })}.${admin.split(".")[2]}`,
      kind: "invalid",
    },
    { name: "expired management", header: `Bearer ${await managementToken(t, "root", true, -3_600)}`, kind: "invalid" },
    {
      name: "expired participant",
      header: `Bearer ${await mintParticipantToken({ now: Date.now(), userId: user.id, tokenVersion: user.tokenVersion, secret: participantSecret, ttlSeconds: -3_600 })}`,
      kind: "invalid",
    },
    {
      name: "wrong secret",
      header: `Bearer ${await sign({ ...base, sub: "root", typ: "management", admin: true }, "not-the-secret-not-the-secret-0123")}`,
      kind: "invalid",
    },
    {
      name: "HS512",
      header: `Bearer ${await sign({ ...base, sub: "root", typ: "management", admin: true }, managementSecret, "HS512")}`,
      kind: "invalid",
    },
    {
      name: "no subject",
      header: `Bearer ${await sign({ ...base, typ: "management", admin: true }, managementSecret)}`,
      kind: "invalid",
    },
    {
      name: "wrong issuer",
      header: `Bearer ${await sign({ ...base, iss: "elsewhere", sub: "root", typ: "management", admin: true }, managementSecret)}`,
      kind: "invalid",
    },
    {
      name: "participant type, management key",
      header: `Bearer ${await sign({ ...base, sub: user.id, typ: "participant", tv: user.tokenVersion }, managementSecret)}`,
      kind: "invalid",
    },
    {
      name: "management type, participant key",
      header: `Bearer ${await sign({ ...base, sub: user.id, typ: "management", tv: user.tokenVersion }, participantSecret)}`,
      kind: "invalid",
    },
    {
      name: "stale participant",
      header: `Bearer ${await mintParticipantToken({ now: Date.now(), userId: user.id, tokenVersion: user.tokenVersion + 1, secret: participantSecret })}`,
      kind: "invalid",
      ended: true,
    },
    {
      name: "deleted participant",
      header: `Bearer ${await mintParticipantToken({ now: Date.now(), userId: randomUUID(), tokenVersion: 0, secret: participantSecret })}`,
      kind: "invalid",
      ended: true,
    },
    {
      name: "participant without uuid",
      header: `Bearer ${await sign({ ...base, sub: "not-a-uuid", typ: "participant", tv: 0 }, participantSecret)}`,
      kind: "invalid",
    },
  ];

  await db.insert(tokenRevocations).values({ subjectId: "revoked", revokedBefore: new Date(Date.now() + 86_400_000) });
  await t.settle();
  callers.push({ name: "revoked", header: `Bearer ${await managementToken(t, "revoked", true)}`, kind: "invalid" });

  const actions = {
    reader: "read-rule-failures",
    editor: "edit-participant-data",
    runner: "run-study-action",
    updater: "update-study-props",
    surveyor: "manage-surveys",
    coder: "manage-code-lists",
    keeper: "manage-study-variables",
    ruler: "manage-rules",
    auditor: "read-audit-log",
    subscriber: "manage-subscriptions",
    templater: "manage-message-templates",
  } as const;
  for (const [name, action] of Object.entries(actions)) {
    const { token } = await researcher(t, EXISTING_STUDY, action);
    callers.push({ name, header: `Bearer ${token}`, kind: "management", grant: { study: EXISTING_STUDY, action } });
  }
  // Every right on a study that does not exist, none on the one that does.
  await grantPermission(db, "stranger", "other-study", "*");
  callers.push({
    name: "stranger",
    header: `Bearer ${await managementToken(t, "stranger")}`,
    kind: "management",
    grant: { study: "other-study", action: "*" },
  });
  return new Map(callers.map((caller) => [caller.name, caller]));
}

// ---------------------------------------------------------------------------------------------
// The world: an app, its fixtures, its operations

interface World {
  t: TestApp;
  ops: Operation[];
  opsById: Map<string, Operation>;
  schemas: Record<string, JsonSchema>;
  callers: Map<string, Caller>;
  /** The fuzz user's main profile: the one the generators name. */
  profileId: string;
  /** All of the fuzz user's profiles, as many as an account may hold (so adding one is refused). */
  profileIds: string[];
  email: string;
  /** Requests sent so far (see resetRateLimits). */
  sent: number;
}

const VALID_RULES = [
  onEvent("CUSTOM", call("UPDATE_FLAG", str("seen"), str("yes"))),
  onEvent("SUBMIT", call("UPDATE_FLAG", str("submitted"), str("yes"))),
];

async function createWorld(): Promise<World> {
  const t = await createTestApp();
  await setupStudy(t, { key: EXISTING_STUDY, rules: [VALID_RULES[1]!] });
  for (const [participantId, studyStatus] of [
    ["p1", "active"],
    ["p2", "exited"],
    ["p4", "accountDeleted"],
  ] as const) {
    await insertParticipant(t.database.db, { studyKey: EXISTING_STUDY, participantId, studyStatus });
  }
  // As many profiles as an account may hold: adding one more is refused (409) and writes nothing.
  const user = await participantUser(
    t,
    Array.from({ length: MAX_PROFILES_PER_USER }, (_, i) => (i === 0 ? "main" : `profile-${i}`)),
  );
  const callers = await createCallers(t, user.user, user.token);
  // A study's response count is kept in study_stats, written by the first read of the study (and
  // rewritten in place when stale): read it once, so that the fuzz's reads add no row.
  const studyRead = await t.app.request(`/v1/studies/${EXISTING_STUDY}`, {
    headers: { Authorization: callers.get("admin")!.header! },
  });
  if (studyRead.status !== 200) throw new Error(`reading the study answered ${studyRead.status}`);
  const doc = (await (await t.app.request("/openapi.json")).json()) as OpenApiDocument;
  const ops = operationsOf(doc);
  return {
    t,
    ops,
    opsById: new Map(ops.map((op) => [op.id, op])),
    schemas: doc.components.schemas,
    callers,
    profileId: user.profiles.find((profile) => profile.mainProfile)!.id,
    profileIds: user.profiles.map((profile) => profile.id),
    email: user.user.email,
    sent: 0,
  };
}

/** Every table of the public schema and its row count. */
async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const tables = await t.database.sql<{ table_name: string }[]>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`;
  const counts: Record<string, number> = {};
  for (const { table_name: table } of tables) {
    const [row] = await t.database.sql.unsafe<{ n: number }[]>(
      `select count(*)::int as n from "${table.replaceAll('"', '""')}"`,
    );
    counts[table] = row!.n;
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Recipes → requests

interface Draft {
  op: string;
  /** A caller's name, or a raw Authorization header. */
  caller: string | { header: string };
  params: Record<string, string>;
  dropTrailingSlash: boolean;
  query: [string, string][];
  body: unknown;
  /** The multipart form of an upload: its fields, the file's kind among them. */
  form: FormDraft | null;
  mutation: Mutation;
  headers: Record<string, string>;
}

interface FormDraft {
  profileID?: string;
  file?: FileKind;
  extra: [string, string][];
}

/** Uploaded bytes: allowed image types, a text, nothing, and bytes that only claim to be an image. */
type FileKind = "png" | "jpeg" | "text" | "empty" | "fake png";

const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const TINY_JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);

function fileOf(kind: FileKind): File {
  switch (kind) {
    case "png":
      return new File([TINY_PNG], "photo.png", { type: "image/png" });
    case "jpeg":
      return new File([TINY_JPEG], "photo.jpg", { type: "image/jpeg" });
    case "text":
      return new File(["just text"], "notes.txt", { type: "text/plain" });
    case "empty":
      return new File([], "empty.png", { type: "image/png" });
    case "fake png":
      return new File(["<script>alert(1)</script>"], "photo.png", { type: "image/png" });
  }
}

function renderForm(draft: FormDraft): FormData {
  const form = new FormData();
  if (draft.profileID !== undefined) form.append("profileID", draft.profileID);
  if (draft.file !== undefined) form.append("file", fileOf(draft.file));
  for (const [name, value] of draft.extra) form.append(name, value);
  return form;
}

interface Segment {
  raw: string;
  /** What the server decodes; null when it cannot. */
  decoded: string | null;
  param?: string;
}

interface State {
  method: string;
  segments: Segment[];
  query: string[];
  /** undefined: no body. */
  body: unknown;
  /** Sentinel strings in the body, replaced by raw JSON text when rendered. */
  raws: Map<string, string>;
  transform?: (body: string) => string;
  contentType: string | null;
  /** Send the Content-Type even without a body. */
  typedWithoutBody?: boolean;
  /** Why the API certainly refuses the request, whoever sends it. */
  certain: string[];
  /** Sent without the caller's credential (a write aimed to fail that no target can stop). */
  withoutCredential?: boolean;
}

interface Built {
  op: string;
  caller: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** A Blob: a body over the limit, sent as it is without a copy per request. */
  body: string | FormData | Blob | null;
  /** Invalid, unauthorised or aimed at nothing: must be a 4xx. */
  mustRefuse: boolean;
  reasons: string[];
}

const enc = encodeURIComponent;
const SENTINEL = "fuzz-raw-value-7d1c";

function throwsOnDecode(raw: string): boolean {
  try {
    decodeURIComponent(raw);
    return false;
  } catch {
    return true;
  }
}

const hasBodyProperty = (w: World, op: Operation, name: string) =>
  op.body !== null && resolve(op.body, w.schemas).properties?.[name] !== undefined;

type Site =
  | { at: "value"; path: Path }
  | { at: "key"; path: Path; key: string }
  | { at: "newKey" }
  | { at: "param"; index: number }
  | { at: "static"; index: number }
  | { at: "query" };

function injectionSites(w: World, op: Operation, st: State, where: { body: boolean; url: boolean }): Site[] {
  const sites: Site[] = [];
  if (where.body && st.body !== undefined) {
    const { values, keys } = walk(st.body, op.body, w.schemas);
    const inner = values.filter((site) => site.path.length > 0);
    for (const site of inner.length > 0 ? inner : values) sites.push({ at: "value", path: site.path });
    for (const site of keys) sites.push({ at: "key", ...site });
    if (isObject(st.body)) sites.push({ at: "newKey" });
  }
  if (where.url) {
    st.segments.forEach((segment, index) => {
      if (segment.param !== undefined) sites.push({ at: "param", index });
      else if (segment.raw !== "") sites.push({ at: "static", index });
    });
    sites.push({ at: "query" });
  }
  return sites;
}

/** Puts `unit` (NUL or a lone surrogate) into a string at the site. */
function inject(st: State, site: Site, unit: string, at: number): void {
  switch (site.at) {
    case "value": {
      const current = getAt(st.body, site.path);
      st.body = setAt(st.body, site.path, insertAt(typeof current === "string" ? current : "", at, unit));
      return;
    }
    case "key":
      st.body = withEntries(st.body, site.path, (object) =>
        Object.entries(object).map(([key, value]) => [key === site.key ? insertAt(key, at, unit) : key, value]),
      );
      return;
    case "newKey":
      st.body = withEntries(st.body, [], (object) => [...Object.entries(object), [insertAt("note", at, unit), "x"]]);
      return;
    case "param": {
      const segment = st.segments[site.index]!;
      segment.decoded = insertAt(segment.decoded ?? "", at, unit);
      segment.raw = enc(segment.decoded);
      return;
    }
    case "static": {
      const segment = st.segments[site.index]!;
      segment.raw = insertAt(segment.raw, at, enc(unit));
      segment.decoded = null;
      return;
    }
    case "query":
      st.query.push(at % 2 === 0 ? `note=${enc(insertAt("x", at, unit))}` : `${enc(insertAt("n", at, unit))}=x`);
      return;
  }
}

/** A body position for a raw value: a value site or a new key, per `where`. */
function placeRaw(w: World, op: Operation, st: State, where: number, raw: string, prefer?: (s: ValueSite) => boolean) {
  const { values } = walk(st.body, op.body, w.schemas);
  const ordered = prefer ? [...values.filter(prefer), ...values.filter((s) => !prefer(s))] : values;
  const choices: (ValueSite | "newKey")[] = [...ordered, ...(isObject(st.body) ? ["newKey" as const] : [])];
  const choice = choices[where % choices.length]!;
  st.raws.set(SENTINEL, raw);
  if (choice === "newKey") {
    st.body = withEntries(st.body, [], (object) => [...Object.entries(object), ["fuzz", SENTINEL]]);
    return undefined;
  }
  st.body = setAt(st.body, choice.path, SENTINEL);
  return choice;
}

function applyMutation(w: World, op: Operation, st: State, m: Mutation): void {
  switch (m.kind) {
    case "none":
      return;
    case "nul": {
      const sites = injectionSites(w, op, st, { body: true, url: true });
      inject(st, sites[m.where % sites.length]!, "\u0000", m.at);
      st.certain.push("NUL");
      return;
    }
    case "surrogate": {
      const sites = injectionSites(w, op, st, { body: true, url: false });
      if (sites.length === 0) {
        applyMutation(w, op, st, { kind: "percent", where: m.where, at: m.at, seq: "%ED%A0%80", noise: m.noise });
        return;
      }
      inject(st, sites[m.where % sites.length]!, m.unit, m.at);
      st.certain.push("lone surrogate");
      if (m.noise) st.query.push("lone=%ED%A0%80", `raw=${"\ud800"}`);
      return;
    }
    case "percent": {
      const sites = injectionSites(w, op, st, { body: false, url: true }).filter((site) => site.at !== "query");
      const site = sites[m.where % sites.length] as { index: number };
      const segment = st.segments[site.index]!;
      segment.raw = m.at % 2 === 0 ? segment.raw + m.seq : m.seq + segment.raw;
      segment.decoded = null;
      if (throwsOnDecode(segment.raw)) st.certain.push("invalid percent-encoding");
      if (m.noise) st.query.push(`q=${m.seq}`, "lone=%ED%A0%80");
      return;
    }
    case "deep": {
      const fragment = deepText(m.shape, m.depth);
      st.certain.push(`nested ${m.depth} deep`);
      st.raws.set(SENTINEL, fragment);
      if (st.body === undefined) {
        if (st.method === "GET") st.method = "POST";
        st.body = SENTINEL;
      } else if (m.shape === "items" && hasBodyProperty(w, op, "responses") && isObject(st.body)) {
        st.body = { ...st.body, responses: [{ key: "q1", response: SENTINEL }] };
      } else if (m.shape === "rules" && hasBodyProperty(w, op, "rules") && isObject(st.body)) {
        st.body = { ...st.body, rules: [SENTINEL] };
      } else {
        placeRaw(w, op, st, m.where, fragment);
      }
      return;
    }
    case "engineDepth": {
      // Within the body nesting limit, beyond the rule engine's (64 expressions).
      const fragment = rulesText(m.expressions);
      if (hasBodyProperty(w, op, "rules") && isObject(st.body)) {
        st.raws.set(SENTINEL, fragment);
        st.body = { ...st.body, rules: [SENTINEL] };
      } else if (st.body !== undefined) {
        placeRaw(w, op, st, m.where, fragment);
      }
      return;
    }
    case "number": {
      if (st.body === undefined) {
        st.query.push(`${op.query.find((q) => q.schema.type === "integer")?.name ?? "limit"}=${enc(m.token)}`);
        return;
      }
      const numeric = (site: ValueSite) => site.schema?.type === "integer" || site.schema?.type === "number";
      const site = placeRaw(w, op, st, m.where, m.token, numeric);
      let parsed: unknown;
      try {
        parsed = JSON.parse(m.token);
      } catch {
        st.certain.push(`not JSON: ${m.token}`);
        return;
      }
      if (site && violates(site.schema, parsed)) st.certain.push(`number ${m.token} at ${site.path.join(".")}`);
      return;
    }
    case "wrongType": {
      if (st.body === undefined) return;
      const { values } = walk(st.body, op.body, w.schemas);
      const site = values[m.where % values.length]!;
      st.body = setAt(st.body, site.path, structuredClone(m.value));
      if (violates(site.schema, m.value)) st.certain.push(`wrong type at ${site.path.join(".") || "root"}`);
      return;
    }
    case "missing": {
      if (st.body === undefined) return;
      const { objects } = walk(st.body, op.body, w.schemas);
      const candidates = objects.flatMap((site) =>
        (site.schema?.required ?? [])
          .filter((key) => Object.hasOwn(site.value as object, key))
          .map((key) => ({ site, key })),
      );
      const choice = candidates[m.where % Math.max(candidates.length, 1)];
      if (choice) {
        st.body = withEntries(st.body, choice.site.path, (object) =>
          Object.entries(object).filter(([key]) => key !== choice.key),
        );
        st.certain.push(`missing ${[...choice.site.path, choice.key].join(".")}`);
      } else {
        st.body = [];
        st.certain.push("body is an array");
      }
      return;
    }
    case "extra": {
      if (st.body === undefined) return;
      const { objects } = walk(st.body, op.body, w.schemas);
      const site = objects[m.where % Math.max(objects.length, 1)];
      if (site) st.body = withEntries(st.body, site.path, (object) => [...Object.entries(object), ...m.entries]);
      return;
    }
    case "empty": {
      if (st.body === undefined) return;
      const strings = walk(st.body, op.body, w.schemas).values.filter((site) => typeof site.value === "string");
      const site = strings[m.where % Math.max(strings.length, 1)];
      if (!site) return;
      st.body = setAt(st.body, site.path, "");
      if (violates(site.schema, "")) st.certain.push(`empty ${site.path.join(".")}`);
      return;
    }
    case "long": {
      if (m.inPath) {
        const value = m.unit.repeat(Math.min(m.length, 20_000));
        const sites = injectionSites(w, op, st, { body: false, url: true }).filter((site) => site.at !== "query");
        const site = sites[m.where % sites.length] as { at: "param" | "static"; index: number };
        const segment = st.segments[site.index]!;
        if (site.at === "param") {
          segment.decoded = value;
          segment.raw = enc(value);
          if (violates(op.pathParams[segment.param!], value)) st.certain.push(`long ${segment.param}`);
        } else {
          segment.raw += enc(value);
          segment.decoded = null;
          st.certain.push("no such path");
        }
        return;
      }
      const value = m.unit.repeat(m.length);
      if (st.body === undefined) {
        st.query.push(`long=${enc(value)}`);
        return;
      }
      const site = placeRaw(w, op, st, m.where, JSON.stringify(value), (s) => s.schema?.type === "string");
      if (site && violates(site.schema, value)) st.certain.push(`long ${site.path.join(".")}`);
      return;
    }
    case "malformed":
      if (st.body === undefined) return;
      st.transform = (body) => MALFORMED[m.variant]!(body, m.cut);
      return;
    case "contentType":
      st.contentType = m.value;
      return;
    case "emptyBody":
      if (op.body === null) return;
      if (OPTIONAL_BODY.has(op.id)) {
        // an empty body stands for `{}` there: the request is what it would be with `{}`
        st.body = {};
        st.transform = () => "";
        return;
      }
      // No body at all, or an empty one, either declared as JSON.
      if (m.absent) {
        st.body = undefined;
        st.typedWithoutBody = true;
      } else st.transform = () => "";
      st.certain.push("empty body");
      return;
    case "method": {
      if (m.method === op.method || (m.method === "HEAD" && op.method === "GET")) return;
      st.method = m.method;
      const routed = w.ops.some(
        (other) =>
          other.template === op.template &&
          (other.method === m.method || (other.method === "GET" && m.method === "HEAD")),
      );
      // An empty parameter can make the path another route's: `study-counters/{scope}` with an
      // empty scope is the collection `study-counters` with its trailing slash, which has a GET.
      const emptyParameter = st.segments.some((segment) => segment.param !== undefined && segment.raw === "");
      if (!routed && !emptyParameter) st.certain.push(`${m.method} is no method of this path`);
      return;
    }
    case "queryNoise":
      for (let i = 0; i < m.copies; i++) st.query.push(...m.pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`));
      return;
    case "duplicateKey": {
      if (!isObject(st.body) || Object.keys(st.body).length === 0) return;
      // The first of two equal keys: JSON.parse keeps the later, original one.
      const first = Object.keys(st.body)[0]!;
      st.transform = (body) => `{${JSON.stringify(first)}:${JSON.stringify(m.value)},${body.slice(1)}`;
      return;
    }
  }
}

/** The permission an operation needs; "any" for one any right on the study allows (reading the study). */
/**
 * case-backend's management routes that name no study: who may call them. "admin": admins alone
 * (the fuzz's other callers hold study grants only, none for messaging or users); "any": any
 * management caller; "session": a signed-in session's token, which no fuzz caller has.
 */
function nonStudyAccess(op: Operation): "admin" | "any" | "session" | undefined {
  if (op.id === "GET /v1/auth/permissions" || op.id === "GET /v1/user-management/management-users") return "any";
  if (op.id === "POST /v1/auth/extend-session" || op.template.startsWith("/v1/auth/renew-token/")) return "session";
  if (op.template.startsWith("/v1/messaging/") || op.template.startsWith("/v1/user-management/")) return "admin";
  if (op.id === "POST /v1/studies") return "admin"; // create-study for *: the fuzz's callers hold it only as admin
  return undefined;
}

function actionOf(op: Operation): string {
  // the participant accounts: an admin's alone
  if (op.template.startsWith("/v1/participant-users")) return "admin";
  const nonStudy = nonStudyAccess(op);
  if (nonStudy !== undefined) return nonStudy;
  // case-admin's management routes. The action named is the fuzz caller's grant that opens the
  // route: studyflow's earlier names grant their CASE counterparts (manage-surveys: every survey
  // action; manage-code-lists: manage-study-code-lists; manage-subscriptions:
  // update-notification-subscriptions; update-study-props: update-study-status), and reads take
  // read-study-config or the matching manage grant.
  if (op.template.includes("/study-code-list")) return "manage-code-lists";
  if (op.template.includes("/study-counters")) return "manage-study-counters";
  if (op.template.includes("/notification-subscriptions")) return "manage-subscriptions";
  if (/^\/v1\/studies\/\{studyKey\}\/permissions/.test(op.template)) {
    return op.method === "GET" ? "read-study-config" : "manage-study-permissions";
  }
  if (op.id === "DELETE /v1/studies/{studyKey}") return "delete-study";
  if (["/status", "/display-props", "/is-default", "/file-upload-config"].some((end) => op.template.endsWith(end))) {
    return "update-study-props";
  }
  if (op.template.includes("/run-actions/previous-responses")) return "run-study-action";
  if (op.id === "PUT /v1/studies/{studyKey}/participants/{participantID}") return "edit-participant-data";
  // case-backend's remaining participant management: its own actions, which no fuzz researcher holds
  if (op.id === "POST /v1/studies/{studyKey}/participants/virtual") return "create-virtual-participant";
  if (op.id === "POST /v1/studies/{studyKey}/participants/merge") return "merge-participants";
  if (op.id === "GET /v1/studies/{studyKey}/participants/{participantID}/responses") return "get-responses";
  if (op.template.startsWith("/v1/studies/{studyKey}/participants/{participantID}/")) return "edit-participant-data";
  // CASE's data-exporter group (and export-config): CASE's read actions, one per kind of data
  if (op.template.includes("/data-exporter/confidential-responses")) return "get-confidential-responses";
  if (op.template.includes("/data-exporter/survey-info") || op.template.endsWith("/export-config")) {
    return "read-study-config";
  }
  if (op.template.includes("/data-exporter/responses") || op.template.endsWith("/daily-export-config")) {
    return "get-responses";
  }
  if (op.template.includes("/data-exporter/participants")) return "get-participant-states";
  if (op.template.includes("/data-exporter/reports")) return "get-reports";
  // CASE's data-explorer group
  if (op.template.includes("/data-explorer/responses"))
    return op.method === "DELETE" ? "delete-responses" : "get-responses";
  if (op.template.includes("/data-explorer/participants") || op.template.includes("/data-explorer/files")) {
    return "get-participant-states";
  }
  if (op.template.includes("/data-explorer/reports")) return "get-reports";
  if (op.template.includes("/run-actions/")) return "run-study-action";
  if (op.template.endsWith("/responses")) return "edit-participant-data";
  if (op.template.endsWith("/track-account")) return "update-study-props";
  if (op.template.endsWith("/rule-failures")) return "read-rule-failures";
  if (op.template.endsWith("/messages")) return "read-rule-failures";
  if (op.template.includes("/surveys")) return "manage-surveys";
  if (op.template.includes("/code-lists")) return "manage-code-lists";
  if (op.template.includes("/variables")) return "manage-study-variables";
  if (op.template.includes("/subscriptions")) return "manage-subscriptions";
  if (op.template.includes("/message-templates")) return "manage-message-templates";
  if (op.template.includes("/rules")) return "manage-rules";
  if (op.template.includes("/timer")) return "manage-timer";
  if (op.template.endsWith("/audit-log")) return "read-audit-log";
  if (op.template.endsWith("/task-retention")) return op.method === "GET" ? "any" : "update-study-props";
  if (op.id === "PATCH /v1/studies/{studyKey}") return "update-study-props";
  if (op.id === "GET /v1/studies/{studyKey}" || op.id === "GET /v1/studies") return "any";
  if (op.id === "GET /v1/studies/{studyKey}/participant-counts") return "any";
  throw new Error(`${op.id}: which permission does it need? Teach the fuzz test.`);
}

/** Hono's reading of a query name or value: `+` is a space, then percent-decoding where it can. */
function decodeQueryPart(raw: string): string {
  const spaced = raw.replaceAll("+", " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** A query parameter as the routes read it: its first occurrence (hono), decoded; undefined when absent. */
function queryValue(st: State, name: string): string | undefined {
  for (const entry of st.query) {
    const at = entry.indexOf("=");
    if (decodeQueryPart(at === -1 ? entry : entry.slice(0, at)) !== name) continue;
    return at === -1 ? "" : decodeQueryPart(entry.slice(at + 1));
  }
  return undefined;
}

/**
 * A field of a CASE-shaped body as the route reads it: keys match case-insensitively and the last
 * one wins (apps/api/src/case-compat/key-matching.ts), so `PROFILEID` fills `profileID`.
 */
function caseField(body: unknown, name: string): unknown {
  if (!isObject(body)) return undefined;
  let found: unknown;
  for (const [key, value] of Object.entries(body)) if (key.toLowerCase() === name.toLowerCase()) found = value;
  return found;
}

/** Sets a CASE-shaped body's field, dropping every key the route would read as it. */
function setCaseField(st: State, op: Operation, name: string, value: unknown): void {
  if (!isObject(st.body)) throw new Error(`${op.id}: no body object to aim elsewhere. Teach the fuzz test.`);
  const kept = Object.entries(st.body).filter(([key]) => key.toLowerCase() !== name.toLowerCase());
  st.body = Object.fromEntries([...kept, [name, value]]);
}

const sameAddress = (value: unknown, email: string) =>
  typeof value === "string" && value.trim().toLowerCase() === email.toLowerCase();

/** Whether the fuzz user's own profiles are all that the request names (and it names one). */
const ownProfiles = (w: World, ids: unknown[]) =>
  ids.length > 0 && ids.every((id) => typeof id === "string" && w.profileIds.includes(id));

/**
 * The participant routes, for the fuzz user's valid token: whether the request fails whatever its
 * body's shape. The fuzz user holds the maximum number of profiles, none of them in a study; its
 * token (minted, as the operator CLI does) belongs to no session; no code, file or temporary
 * participant of it exists.
 */
function participantRefuses(w: World, op: Operation, st: State, params: Record<string, string | null>): boolean {
  const field = (name: string) => caseField(st.body, name);
  switch (op.id) {
    case "POST /v1/auth/token/renew":
      return true; // "this token belongs to no session"
    case "POST /v1/auth/logout":
      return false; // a token without a session ends nothing
    case "GET /v1/auth/otp":
      return (queryValue(st, "type") ?? "email") !== "email";
    case "POST /v1/auth/otp/verify":
      return true; // no code was ever sent to the fuzz user (the code request is always aimed away)
    case "POST /v1/auth/resend-email-verification":
      return !sameAddress(field("email"), w.email);
    case "GET /v1/user":
    case "GET /v1/study-service/studies/participating":
    case "PUT /v1/user/contact-preferences":
    case "GET /v1/user/attributes":
    case "GET /v1/auth/token/validate":
    case "GET /v1/auth/token/revoke":
      return false;
    case "PUT /v1/user/preferred-language": {
      const locale = field("newLocale");
      return typeof locale !== "string" || !/^[a-z]{2}(-([A-Z]{2}|\d{3}))?$/.test(locale);
    }
    case "POST /v1/user/attributes": {
      const type = field("type");
      if (typeof type !== "string" || type.trim() === "" || type.length > 100) return true;
      return JSON.stringify(field("attributes") ?? null).length > 16 * 1024;
    }
    case "DELETE /v1/user/attributes/{attributeID}":
      return true; // the fuzz user keeps no attributes (setting one is always aimed away)
    case "DELETE /v1/user":
      return field("password") !== STRONG_PASSWORD; // no sign-in of a session to stand for the password
    case "POST /v1/user/profiles":
      return true; // the account holds as many profiles as it may: 409
    case "PUT /v1/user/profiles":
      return !ownProfiles(w, [field("id")]);
    case "POST /v1/user/profiles/remove":
      return field("profileId") === w.profileId || !ownProfiles(w, [field("profileId")]); // the main one stays
    case "POST /v1/user/password":
      return field("oldPassword") !== STRONG_PASSWORD;
    case "POST /v1/user/change-account-email":
      return field("password") !== STRONG_PASSWORD;
    case "POST /v1/user/change-phone-number":
    case "GET /v1/user/request-phone-number-verification":
      return true; // no SMS gateway: 409
    case "GET /v1/study-service/participant/studies":
      return !ownProfiles(w, [queryValue(st, "profileID")]);
  }
  if (op.template.startsWith("/v1/study-service/participant/studies/")) return true; // the profiles are in no study
  if (op.template.startsWith("/v1/study-service/participant-data/")) {
    if ("fileID" in params) return true; // no file exists
    if (op.method === "POST") return true; // an upload: the profiles are in no study (and no form is sent)
    const pids = op.query.some((q) => q.name === "pids");
    return !ownProfiles(w, pids ? (queryValue(st, "pids")?.split(",") ?? []) : [queryValue(st, "pid")]);
  }
  if (op.template.startsWith("/v1/study-service/events/")) {
    if (!ownProfiles(w, [field("profileID")])) return true; // someone else's profile
    if (op.template.endsWith("/enter")) return params.studyKey !== EXISTING_STUDY;
    // no participant of the profile anywhere, no temporary one
    // no virtual participant exists either
    const none = ["/leave", "/merge-temporary-participant", "/merge-virtual-participant", "/submit", "/custom"];
    if (none.some((end) => op.template.endsWith(end))) {
      return true;
    }
  }
  if (op.template.startsWith("/v1/study-service/virtual-participants/")) {
    // a look-up of the existing study with a key and a value answers, maybe with no one
    return params.studyKey !== EXISTING_STUDY || !queryValue(st, "key") || !queryValue(st, "value");
  }
  throw new Error(`${op.id}: when can it succeed? Teach the fuzz test.`);
}

/** The public routes: whether the request fails whatever its body's shape. */
function publicRefuses(w: World, op: Operation, st: State): boolean {
  const field = (name: string) => caseField(st.body, name);
  switch (op.id) {
    // no reset, verification, survey-login or newsletter token was ever issued; management sign-in
    // is off (the fuzz's API has no MANAGEMENT_IDP_SIGNIN_SECRET: 401 for every caller)
    case "POST /v1/auth/signin-with-idp":
    case "POST /v1/password-reset/reset":
    case "POST /v1/password-reset/get-infos":
    case "POST /v1/auth/verify-email":
    case "POST /v1/auth/temptoken-info":
    case "POST /v1/auth/login-with-temptoken":
    case "POST /v1/unsubscribe-newsletter":
      return true;
    case "POST /v1/study-service/temp-participant/submit-response":
    case "GET /v1/study-service/temp-participant/surveys":
      return true; // no temporary participant exists (registration is always aimed away)
    case "POST /v1/auth/login":
      return !(sameAddress(field("email"), w.email) && field("password") === STRONG_PASSWORD);
    case "POST /v1/study-service/temp-participant/register":
      return field("studyKey") !== EXISTING_STUDY;
    default:
      return false;
  }
}

/** Whether the caller or the target alone make the request fail. */
function refusedByContext(w: World, op: Operation, caller: Caller, st: State): boolean {
  const params = Object.fromEntries(st.segments.filter((s) => s.param).map((s) => [s.param!, s.decoded]));
  switch (op.security) {
    case "management": {
      if (caller.kind !== "management" || !caller.grant) return true;
      if (op.id === "GET /v1/studies") return false; // the studies the caller may see, maybe none
      const access = nonStudyAccess(op);
      if (access === "session") return true; // no fuzz token belongs to a session: 403 or 404
      if (access === "any") return false;
      if (access === "admin") return caller.grant !== "admin";
      if (actionOf(op) === "admin") {
        // the participant accounts: no account or deletion has an id the fuzz makes up
        return caller.grant !== "admin" || "id" in params || "deletionId" in params;
      }
      const study = params.studyKey;
      if (study === undefined || study === null) return true;
      const grant = caller.grant;
      const action = actionOf(op);
      const permitted =
        grant === "admin" ||
        (grant.study === study && (grant.action === "*" || action === "any" || grant.action === action));
      if (!permitted || study !== EXISTING_STUDY) return true;
      if ("taskID" in params) return true; // no task exists
      // case-backend's one-participant runs answer for any id: an unknown participant counts 0
      if (/\/run-actions\/(participants|previous-responses)\/\{participantID\}$/.test(op.template)) return false;
      if ("participantID" in params) {
        // a session is taken off a participant of any status, a deleted account's too
        const anyStatus = op.method === "GET" || op.template.endsWith("/remove-session");
        const participants = anyStatus ? EXISTING_PARTICIPANTS : SUBMITTABLE;
        return !participants.has(params.participantID ?? "");
      }
      return false;
    }
    case "participant":
      // renewal reads its own (maybe expired) bearer; the other routes need a valid one, but for
      // signing out, where an ended account's or token version's is enough
      if (caller.kind !== "participant") return !(caller.ended && op.id === "POST /v1/auth/logout");
      return participantRefuses(w, op, st, params);
    case "public":
      return publicRefuses(w, op, st);
  }
}

/** Routes that write nothing even when they succeed, for the fuzz's requests. */
const WRITES_NOTHING = new Set([
  "POST /v1/password-reset/initiate", // writes only for an account's address, which the fuzz never sends
  "POST /v1/auth/logout", // the fuzz user's token belongs to no session
  "POST /v1/auth/temptoken-info",
  "POST /v1/password-reset/get-infos",
]);

/**
 * Operations that, succeeding, would end every token of the fuzz user (and make its stale token a
 * valid one): aimed away even where writes are allowed.
 */
const ENDS_THE_FUZZ_USER = new Set(["GET /v1/auth/token/revoke"]);

/** Operations that may write when they succeed (asking for a sign-in code or revoking tokens are GETs that do). */
const mayWrite = (op: Operation) =>
  (op.method !== "GET" || op.id === "GET /v1/auth/otp" || ENDS_THE_FUZZ_USER.has(op.id)) && !WRITES_NOTHING.has(op.id);

/** Aims a request that could succeed and write at something that makes it fail, changing nothing. */
function retarget(st: State, op: Operation): void {
  switch (op.id) {
    case "GET /v1/auth/otp":
      st.query.unshift("type=sms"); // 400: only e-mail codes are sent
      return;
    case "POST /v1/auth/signup":
      setCaseField(st, op, "instanceID", "another-instance"); // 400: another instance's sign-up
      return;
    case "POST /v1/auth/login":
    case "DELETE /v1/user":
    case "POST /v1/user/change-account-email":
      setCaseField(st, op, "password", "not the password"); // 401
      return;
    case "POST /v1/user/password":
      setCaseField(st, op, "oldPassword", "not the password"); // 401
      return;
    case "POST /v1/auth/resend-email-verification":
      setCaseField(st, op, "email", "not-the-account@example.org"); // 400: not the account's address
      return;
    case "PUT /v1/user/profiles":
      setCaseField(st, op, "id", ABSENT_PROFILE); // 404
      return;
    case "POST /v1/user/profiles/remove":
      setCaseField(st, op, "profileId", ABSENT_PROFILE); // 404
      return;
    case "PUT /v1/user/contact-preferences":
      setCaseField(st, op, "receiveWeeklyMessageDayOfWeek", 7); // 400: days are 0 to 6
      return;
    case "PUT /v1/user/preferred-language":
      setCaseField(st, op, "newLocale", "not a language"); // 400
      return;
    case "POST /v1/user/attributes":
      setCaseField(st, op, "type", ""); // 400: type is required
      return;
    case "GET /v1/auth/token/revoke":
      st.withoutCredential = true; // 401
      return;
  }
  if (nonStudyAccess(op) !== undefined) {
    // no target stops an admin's write here (a made-up id may be created): send it without the token, 401
    st.withoutCredential = true;
    return;
  }
  const segment = st.segments.find((s) => s.param === "studyKey");
  if (segment) {
    segment.raw = ABSENT_STUDY;
    segment.decoded = ABSENT_STUDY;
  } else if (op.caseShaped && caseField(st.body, "studyKey") !== undefined) {
    setCaseField(st, op, "studyKey", ABSENT_STUDY);
  } else if (isObject(st.body) && Object.hasOwn(st.body, "studyKey")) {
    st.body = { ...st.body, studyKey: ABSENT_STUDY };
  } else {
    throw new Error(`${op.id}: cannot aim this request at an absent study. Teach the fuzz test.`);
  }
}

function renderBody(st: State): string | null {
  if (st.method === "GET" || st.method === "HEAD" || st.body === undefined) return null;
  let body = JSON.stringify(st.body);
  for (const [sentinel, raw] of st.raws) body = body.replace(JSON.stringify(sentinel), () => raw);
  return st.transform ? st.transform(body) : body;
}

function build(w: World, d: Draft, options: { allowWrites?: boolean } = {}): Built {
  const op = w.opsById.get(d.op)!;
  const caller: Caller =
    typeof d.caller === "string" ? w.callers.get(d.caller)! : { name: "raw", header: d.caller.header, kind: "invalid" };
  const segments = op.template.split("/").map((part): Segment => {
    const param = /^\{(.+)\}$/.exec(part)?.[1];
    if (param === undefined) return { raw: part, decoded: part };
    const value = d.params[param] ?? "";
    return { raw: enc(value), decoded: value, param };
  });
  if (d.dropTrailingSlash && segments.length > 1 && segments.at(-1)!.raw === "") segments.pop();
  const st: State = {
    method: op.method,
    segments,
    query: d.query.map(([k, v]) => `${enc(k)}=${enc(v)}`),
    body: op.body === null ? undefined : structuredClone(d.body),
    raws: new Map(),
    contentType: "application/json",
    certain: [],
  };
  applyMutation(w, op, st, d.mutation);
  // A method mutation may land on another operation of the same path (PATCH → GET of a study), and
  // an empty last path parameter on the collection's path (…/participants/ lists them): the request
  // is then that operation's, with its body schema and its permission.
  const servedAt = (template: string) =>
    w.ops.find(
      (other) =>
        (other.template === template || other.template === template.replace(/\/$/, "")) &&
        (other.method === st.method || (other.method === "GET" && st.method === "HEAD")),
    );
  const last = st.segments.at(-1)!;
  const collection =
    // an empty last parameter, or "." (which the URL drops), names the collection's path
    last.param !== undefined && (last.raw === "" || last.raw === ".")
      ? servedAt(op.template.slice(0, op.template.lastIndexOf("{")))
      : undefined;
  if (collection) delete last.param;
  const served = collection ?? servedAt(op.template) ?? op;

  const examine = () => {
    const body = renderBody(st);
    const reasons = [...st.certain];
    for (const h of served.headers) if (badIdempotencyKey(d.headers[h.name])) reasons.push(`bad ${h.name}`);
    if (body !== null && served.body !== null) {
      if (st.transform && certainlyBadText(body)) reasons.push("no JSON object");
      // CASE-shaped routes read JSON whatever the Content-Type says, as case-backend does
      if (!isCaseShaped(served) && body !== "" && !(st.contentType && JSON_REQUEST.test(st.contentType))) {
        reasons.push("not JSON-typed");
      }
    }
    return { body, reasons };
  };
  let { body, reasons } = examine();
  let refused = refusedByContext(w, served, caller, st);
  if (
    !refused &&
    reasons.length === 0 &&
    mayWrite(served) &&
    (!options.allowWrites || ENDS_THE_FUZZ_USER.has(served.id))
  ) {
    retarget(st, served);
    ({ body, reasons } = examine());
    refused = true;
  }
  const headers: Record<string, string> = { ...d.headers };
  if (caller.header !== null && !st.withoutCredential) headers.Authorization = caller.header;
  if ((body !== null || st.typedWithoutBody) && st.contentType !== null) headers["Content-Type"] = st.contentType;
  // an upload's form, unless a mutation sent a JSON body or another method (the form's own type and boundary)
  const form =
    served.form && served === op && body === null && st.method === "POST" && d.form ? renderForm(d.form) : null;
  const path = st.segments.map((s) => s.raw).join("/") || "/";
  return {
    op: op.id,
    caller: caller.name,
    method: st.method,
    url: st.query.length > 0 ? `${path}?${st.query.join("&")}` : path,
    headers,
    body: form ?? body,
    mustRefuse: refused || reasons.length > 0,
    reasons: refused ? [...reasons, "caller or target"] : reasons,
  };
}

// ---------------------------------------------------------------------------------------------
// Sending and checking

/** Internals that must never reach a client. */
const LEAKS: [string, RegExp][] = [
  ["stack frame", /\bat\s+(?:async\s+)?[\w$.<>[\]]+\s+\((?:file:\/\/|node:|\/)[^)]*\)/],
  ["stack frame", /\bat\s+(?:file:\/\/|node:|\/)\S+:\d+:\d+/],
  ["SQL", /\bselect\s/i],
  ["SQL", /\binsert\s/i],
  ["PostgreSQL", /postgres/i],
  [
    "database error",
    /invalid byte sequence|invalid input syntax|violates .*constraint|syntax error at or near|out of range for type/i,
  ],
  ["source path", /node_modules|\.ts:\d+/],
];

class Tally {
  readonly byStatus = new Map<number, number>();
  readonly byOperation = new Map<string, number>();
  total = 0;

  add(status: number, op: string) {
    this.total++;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    this.byOperation.set(op, (this.byOperation.get(op) ?? 0) + 1);
  }

  statuses(): Record<string, number> {
    return Object.fromEntries([...this.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => [String(s), n]));
  }
}

/** The operations that got the fewest requests, and how many. */
function leastDriven(tally: Tally): Record<string, number> {
  return Object.fromEntries([...tally.byOperation].sort(([, a], [, b]) => a - b).slice(0, 3));
}

const clip = (value: string, length = 240) =>
  value.length > length ? `${value.slice(0, length)}… (${value.length} chars)` : value;

/**
 * The fuzz sends thousands of requests from one client to routes limited to a few per address,
 * account or user and hour (sign-up, sign-in failures, codes, uploads): their 429s would hide what
 * the routes do with the rest. So the limiters' buckets are emptied every few requests; a 429 that
 * still comes is a refusal like any other (the limits have tests of their own).
 */
const RATE_LIMIT_RESET_EVERY = 8;

async function resetRateLimits(w: World): Promise<void> {
  const redis = w.t.deps.redis;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${w.t.config.QUEUE_PREFIX}:ratelimit:*`, "COUNT", 1_000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

function describeForm(form: FormData): string {
  const parts = [...form.entries()].map(([name, value]) =>
    typeof value === "string"
      ? `${name}=${clip(JSON.stringify(value), 80)}`
      : `${name}=<${value.type}, ${value.size} bytes>`,
  );
  return `multipart form ${parts.join(", ")}`;
}

/** Sends the request and checks the answer; returns its status. */
async function exchange(w: World, built: Built, tallies: Tally[], checkRefusal = true): Promise<number> {
  if (++w.sent % RATE_LIMIT_RESET_EVERY === 0) await resetRateLimits(w);
  const init: RequestInit = { method: built.method, headers: built.headers };
  if (built.body !== null) init.body = built.body;
  const res = await w.t.app.request(built.url, init);
  for (const tally of tallies) tally.add(res.status, built.op);
  let answer = "";
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) await res.body?.cancel();
  else answer = await res.text();
  const where = [
    `${built.op} as ${built.caller}`,
    `${built.method} ${clip(built.url)}`,
    `headers ${clip(JSON.stringify({ ...built.headers, Authorization: undefined }))}`,
    `body ${built.body === null ? "none" : built.body instanceof FormData ? describeForm(built.body) : built.body instanceof Blob ? `${built.body.size} bytes` : clip(JSON.stringify(built.body))}`,
    `must refuse: ${built.mustRefuse} (${built.reasons.join(", ")})`,
    `→ ${res.status} ${clip(answer, 400)}`,
  ].join("\n  ");

  expect(res.status, where).toBeLessThan(500);
  if (checkRefusal && built.mustRefuse)
    expect(res.status, `${where}\nexpected a refusal (4xx)`).toBeGreaterThanOrEqual(400);
  if (res.status < 400 || built.method === "HEAD") return res.status;
  expect(res.headers.get("content-type") ?? "", where).toMatch(/^application\/json/);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw new Error(`a ${res.status} without a JSON body:\n  ${where}`);
  }
  expect(isObject(parsed) ? Object.keys(parsed) : parsed, where).toEqual(["error"]);
  const message = (parsed as { error: unknown }).error;
  expect(typeof message, where).toBe("string");
  for (const [what, pattern] of LEAKS) {
    expect(pattern.test(message as string), `${what} in the error message:\n  ${where}`).toBe(false);
  }
  return res.status;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries of recipes

function paramArb(name: string): fc.Arbitrary<string> {
  switch (name) {
    case "studyKey":
      return fc.oneof(
        { weight: 6, arbitrary: fc.constant(EXISTING_STUDY) },
        { weight: 1, arbitrary: fc.constantFrom("other-study", "study-b", "STUDY-A", "study-a.", ".", "..") },
        { weight: 2, arbitrary: text(30) },
      );
    case "participantID":
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom("p1", "p2", "p4", "p9") },
        { weight: 2, arbitrary: text(30) },
      );
    case "taskID":
      return fc.oneof(fc.uuid(), fc.constantFrom("t1", "00000000-0000-0000-0000-000000000000"), text(30));
    default:
      return text(30);
  }
}

const cursorOf = (instant: string, id: string) => Buffer.from(`${instant}|${id}`, "utf8").toString("base64url");

/** `known`: the conformance's values for a parameter of this name (a profile id of the fuzz user's, …). */
function queryValueArb(schema: JsonSchema, known?: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  const valid = conforming(schema, { schemas: {}, properties: {}, components: {} }).map(String);
  return fc.oneof(
    { weight: 3, arbitrary: known ? fc.oneof(known.map(String), valid) : valid },
    { weight: 1, arbitrary: fc.constantFrom(...EXTREME_INSTANTS) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...EXTREME_INSTANTS), fc.uuid()).map(([at, id]) => cursorOf(at, id)),
    },
    { weight: 1, arbitrary: fc.constantFrom("1e400", "-1", "0", "1.5", "", " ", "true", "null", "[]", "501", " 7 ") },
    { weight: 1, arbitrary: text(20) },
  );
}

function queryArb(op: Operation, known: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<[string, string][]> {
  const declared = op.query.map((q) =>
    fc.option(fc.tuple(fc.constant(q.name), queryValueArb(q.schema, known[q.name])), { nil: undefined, freq: 2 }),
  );
  return fc
    .tuple(fc.tuple(...declared), fc.array(fc.tuple(text(10), text(20)), { maxLength: 2 }))
    .map(([chosen, extra]) => [...chosen.filter((pair) => pair !== undefined), ...extra]);
}

interface DraftOptions {
  callers: fc.Arbitrary<Draft["caller"]>;
  mutation: (op: Operation) => fc.Arbitrary<Mutation>;
  headers?: fc.Arbitrary<Record<string, string>>;
  conformance: Conformance;
  params?: (name: string) => fc.Arbitrary<string>;
}

function draftArb(op: Operation, o: DraftOptions): fc.Arbitrary<Draft> {
  const params = o.params ?? paramArb;
  return fc.record({
    op: fc.constant(op.id),
    caller: o.callers,
    params: fc.record(Object.fromEntries(Object.keys(op.pathParams).map((name) => [name, params(name)]))),
    dropTrailingSlash: op.template.endsWith("/") ? fc.boolean() : fc.constant(false),
    query: queryArb(op, o.conformance.properties),
    body: op.body === null ? fc.constant(null) : conforming(op.body, o.conformance),
    form: op.form ? formArb(o.conformance) : fc.constant(null),
    mutation: o.mutation(op),
    headers: fc
      .tuple(o.headers ?? fc.constant({}), headerParamsArb(op))
      .map(([drawn, declared]) => ({ ...drawn, ...declared })),
  });
}

/** An upload's form: usually a profile and a file, sometimes either missing, now and then a stray field. */
function formArb(c: Conformance): fc.Arbitrary<FormDraft> {
  return fc.record(
    {
      profileID: c.properties.profileID?.map(String) ?? text(40),
      file: fc.constantFrom<FileKind>("png", "jpeg", "text", "empty", "fake png"),
      extra: fc.array(fc.tuple(text(10), text(20)), { maxLength: 2 }),
    },
    { requiredKeys: ["extra"] },
  );
}

/** Idempotency-Key values: fine ones, and ones the routes refuse (longer than 255, not printable ASCII). */
const idempotencyKeys = fc.oneof(
  { weight: 3, arbitrary: fc.uuid() },
  {
    weight: 2,
    arbitrary: fc.constantFrom("k", "x".repeat(255), "x".repeat(256), "é-clé", "key\twith tab", " ", "a".repeat(2_000)),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).filter((key) => /^[\x20-\x7e]*$/.test(key)) },
);

/** Values of the header parameters an operation declares, each maybe left out. */
function headerParamsArb(op: Operation): fc.Arbitrary<Record<string, string>> {
  if (op.headers.length === 0) return fc.constant({});
  const model = Object.fromEntries(
    op.headers.map((h) => {
      if (h.name.toLowerCase() !== "idempotency-key")
        throw new Error(`${op.id}: header ${h.name}? Teach the fuzz test.`);
      return [h.name, idempotencyKeys];
    }),
  );
  return fc
    .record(model, { requiredKeys: [] })
    .map((drawn) =>
      Object.fromEntries(Object.entries(drawn).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    );
}

/** An Idempotency-Key the routes certainly refuse (a header value loses its outer blanks on the way). */
function badIdempotencyKey(value: string | undefined): boolean {
  const key = value?.replace(/^[ \t]+|[ \t]+$/g, "");
  return key !== undefined && key !== "" && (key.length > 255 || /[^\x20-\x7e]/.test(key));
}

const anyOperation = (w: World, o: DraftOptions) => fc.oneof(...w.ops.map((op) => draftArb(op, o)));

/** Latin-1 without controls: what a header value can carry. */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
    maxLength,
  });

const garbageHeaders = fc.record(
  {
    "X-Forwarded-For": fc.oneof(
      headerText(60),
      fc.constantFrom(
        "unknown",
        "1.2.3.4",
        "1.2.3.4, 5.6.7.8",
        "::1",
        "999.999.999.999",
        ",,,",
        "x".repeat(5_000),
        "127.0.0.1, evil",
        "[::1]:80",
        "1.1.1.1\t2.2.2.2",
        "für-ünïcode",
      ),
    ),
    "X-Request-Id": headerText(200),
    "X-Real-IP": headerText(40),
    Forwarded: headerText(60),
    Accept: fc.constantFrom("*/*", "text/html", "application/xml", "", "application/json;q=0"),
    Cookie: headerText(100),
  },
  { requiredKeys: ["X-Forwarded-For"] },
);

// ---------------------------------------------------------------------------------------------
// The properties

/** Every answer of the file, both describes. */
const everything = new Tally();

// ---------------------------------------------------------------------------------------------
// Bodies over the limit

/** The operation's path with its parameters filled: the existing study, a participant of it, "x" for the rest. */
const pathOf = (op: Operation) =>
  op.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === "studyKey" ? EXISTING_STUDY : name === "participantID" ? "p1" : "x",
  );

/** An operation's body limit: the upload's own (the file and its form's framing), else the app's. */
const bodyLimitOf = (w: World, op: Operation) =>
  op.form ? w.t.config.PARTICIPANT_FILE_MAX_BYTES + UPLOAD_FORM_OVERHEAD_BYTES : MAX_BODY_BYTES;

const FORM_BOUNDARY = "fuzz-boundary";
const formHead = () =>
  `--${FORM_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n` +
  "Content-Type: image/png\r\n\r\n";

/** A body of exactly `bytes` bytes: JSON text (one object, one long string) or a multipart form with one file. */
function bodyOfLength(kind: "json" | "form", bytes: number): string {
  if (kind === "json") return `{"a":"${"x".repeat(bytes - 8)}"}`;
  const head = formHead();
  const tail = `\r\n--${FORM_BOUNDARY}--\r\n`;
  return head + "x".repeat(bytes - head.length - tail.length) + tail;
}

/** A body of `total` bytes, made only as the server reads it, counting what it took. */
function countedBody(total: number, first: string) {
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const next = pulled === 0 ? new TextEncoder().encode(first) : chunk;
        pulled += next.length;
        controller.enqueue(next);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

/**
 * Runs per property. Each request draws its operation uniformly, so with about 145 operations the
 * invalid properties' 23,000 requests give each about 160 (standard deviation about 12): fewer than
 * 100 for any of them is a 1-in-5,000 chance per run. About 1 min on two idle cores.
 */
const RUNS = {
  nul: 5_500,
  surrogates: 5_500,
  deep: 4_000,
  numbers: 6_000,
  shapes: 11_000,
  tokens: 6_200,
  maySucceed: 5_000,
};

describe("fuzz: invalid, unauthorised or misdirected requests on every route", () => {
  let w: World;
  let before: Record<string, number>;
  const all = new Tally();
  const perProperty: Record<string, Tally> = {};

  beforeAll(async () => {
    w = await createWorld();
    before = await rowCounts(w.t);
  });
  afterAll(async () => {
    console.log(
      `fuzz: ${all.total} requests, answers by status: ${JSON.stringify(all.statuses())}\n` +
        Object.entries(perProperty)
          .map(([name, tally]) => `  ${name}: ${tally.total} ${JSON.stringify(tally.statuses())}`)
          .join("\n") +
        `\n  operations: ${all.byOperation.size}, the least driven: ${JSON.stringify(leastDriven(all))}`,
    );
    await w.t.close();
  });

  const validFirst = (w: World) => {
    const names = [...w.callers.values()];
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...names.filter((c) => c.kind !== "invalid").map((c) => c.name)) },
      { weight: 1, arbitrary: fc.constantFrom(...names.filter((c) => c.kind === "invalid").map((c) => c.name)) },
    );
  };
  const conformance = (w: World): Conformance => {
    const profile = fc.oneof(fc.constant(w.profileId), text(40));
    const instance = fc.oneof(fc.constant(w.t.config.INSTANCE_ID), text(20));
    const email = fc.oneof(
      fc.constantFrom("someone@example.org", "no.body+tag@example.com"),
      fc.emailAddress(),
      text(30),
    );
    return {
      schemas: w.schemas,
      // body fields and query parameters alike (CASE names a profile `pid` in queries)
      properties: {
        profileID: profile,
        profileId: profile,
        pid: profile,
        pids: profile,
        instanceID: instance,
        instanceId: instance,
        email,
      },
      components: {},
    };
  };

  async function property(name: string, numRuns: number, arb: fc.Arbitrary<Draft>) {
    const tally = (perProperty[name] = new Tally());
    await fc.assert(
      fc.asyncProperty(arb, async (draft) => {
        await exchange(w, build(w, draft), [everything, all, tally]);
      }),
      { numRuns },
    );
  }

  it("drives every operation of the OpenAPI document", () => {
    const documented = w.ops.filter((op) => !UNDOCUMENTED.includes(op.id));
    expect(documented.length).toBeGreaterThanOrEqual(16);
    for (const op of w.ops) {
      for (const name of op.template.match(/\{[^}]+\}/g) ?? [])
        expect(op.pathParams, op.id).toHaveProperty(name.slice(1, -1));
      if (op.security === "management") expect(actionOf(op)).toBeTruthy();
      // case-backend's participant API reads JSON whatever the Content-Type (CASE apps send text/plain)
      if (op.body !== null && PARTICIPANT_API.some((prefix) => op.template.startsWith(prefix))) {
        expect(op.caseShaped, `${op.id} reads its body as CASE clients send it`).toBe(true);
      }
    }
  });

  it("NUL characters in path parameters, query values, body keys and values", { timeout: 600_000 }, async () => {
    await property(
      "NUL",
      RUNS.nul,
      anyOperation(w, { callers: validFirst(w), mutation: () => mutations.nul, conformance: conformance(w) }),
    );
  });

  it("lone surrogates in bodies, broken percent-encodings in paths", { timeout: 600_000 }, async () => {
    await property(
      "surrogates and percent-encodings",
      RUNS.surrogates,
      anyOperation(w, {
        callers: validFirst(w),
        mutation: (op) => (op.body ? fc.oneof(mutations.surrogate, mutations.percent) : mutations.percent),
        conformance: conformance(w),
      }),
    );
  });

  it("bodies nested hundreds to thousands of levels deep", { timeout: 600_000 }, async () => {
    await property(
      "deep nesting",
      RUNS.deep,
      anyOperation(w, {
        callers: validFirst(w),
        mutation: (op) =>
          op.id.includes("/run-actions/participants/") && op.method === "POST" && op.body
            ? fc.oneof(mutations.deep, mutations.engineDepth)
            : mutations.deep,
        conformance: conformance(w),
      }),
    );
  });

  it("numbers out of range, not integers, negative timestamps, numbers as strings", { timeout: 600_000 }, async () => {
    await property(
      "numbers",
      RUNS.numbers,
      anyOperation(w, { callers: validFirst(w), mutation: () => mutations.number, conformance: conformance(w) }),
    );
  });

  it(
    "wrong types, missing and extra fields, empty and long strings, broken JSON, content types, methods",
    {
      timeout: 600_000,
    },
    async () => {
      await property(
        "shapes",
        RUNS.shapes,
        anyOperation(w, {
          callers: validFirst(w),
          mutation: () =>
            fc.oneof(
              mutations.wrongType,
              mutations.missing,
              mutations.extra,
              mutations.empty,
              mutations.long,
              mutations.malformed,
              mutations.contentType,
              mutations.emptyBody,
              mutations.method,
              mutations.queryNoise,
              mutations.duplicateKey,
            ),
          conformance: conformance(w),
        }),
      );
    },
  );

  it("every kind of token, and garbage X-Forwarded-For and other headers", { timeout: 600_000 }, async () => {
    const names = [...w.callers.keys()];
    await property(
      "tokens and headers",
      RUNS.tokens,
      anyOperation(w, {
        callers: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...names) },
          { weight: 1, arbitrary: headerText(300).map((header) => ({ header: `Bearer ${header}` })) },
          { weight: 1, arbitrary: headerText(300).map((header) => ({ header })) },
        ),
        mutation: () =>
          fc.oneof(
            { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
            { weight: 1, arbitrary: mutations.extra },
            { weight: 1, arbitrary: mutations.wrongType },
          ),
        headers: garbageHeaders,
        conformance: conformance(w),
      }),
    );
  });

  it(
    "bodies over the limit on every operation that takes one: 413 (or the upload's earlier refusal), never read past it",
    { timeout: 600_000 },
    async () => {
      const tally = (perProperty["bodies over the limit"] = new Tally());
      const withBody = w.ops.filter((op) => op.body !== null || op.form);
      expect(withBody.length).toBeGreaterThan(50);
      const bodies = new Map<string, Blob>();
      const overLimit = (kind: "json" | "form", bytes: number) => {
        const key = `${kind}:${bytes}`;
        if (!bodies.has(key)) bodies.set(key, new Blob([bodyOfLength(kind, bytes)]));
        return bodies.get(key)!;
      };
      for (const op of withBody) {
        const limit = bodyLimitOf(w, op);
        const valid = op.security === "management" ? "admin" : op.security === "participant" ? "participant" : "none";
        const cases = [
          { caller: valid, type: "application/json", kind: "json" as const, declared: true },
          { caller: valid, type: "application/json", kind: "json" as const, declared: false },
          { caller: valid, type: "text/plain;charset=UTF-8", kind: "json" as const, declared: true },
          { caller: valid, type: "application/octet-stream", kind: "json" as const, declared: false },
          // without a token: the same 413 before any router (the upload: a 401 before its body is read)
          ...(op.security !== "public" && (op.form || op.security === "participant")
            ? [{ caller: "none", type: "application/json", kind: "json" as const, declared: false }]
            : []),
          ...(op.form
            ? [true, false].map((declared) => ({
                caller: valid,
                type: `multipart/form-data; boundary=${FORM_BOUNDARY}`,
                kind: "form" as const,
                declared,
              }))
            : []),
        ];
        for (const c of cases) {
          const body = overLimit(c.kind, limit + 1);
          const caller = w.callers.get(c.caller)!;
          const headers: Record<string, string> = { "Content-Type": c.type };
          if (caller.header !== null) headers.Authorization = caller.header;
          if (c.declared) headers["Content-Length"] = String(limit + 1);
          const status = await exchange(
            w,
            {
              op: op.id,
              caller: caller.name,
              method: op.method,
              url: pathOf(op),
              headers,
              body,
              mustRefuse: true,
              reasons: [`body of ${limit + 1} bytes, ${c.declared ? "declared" : "undeclared"}`],
            },
            [everything, all, tally],
          );
          // The upload authenticates before anything else and reads only a form; every other
          // route's body is refused by the app before its router sees it.
          const expected = !op.form ? 413 : caller.kind !== "participant" ? 401 : c.kind === "form" ? 413 : 415;
          expect(
            status,
            `${op.id} as ${caller.name}, ${c.type}, ${c.declared ? "with" : "without"} Content-Length`,
          ).toBe(expected);
        }
      }

      // A few bodies streamed far beyond the limit (64 MiB, made only as they are read): the API
      // stops reading just past the limit, or never starts where it refuses before reading.
      const upload = withBody.find((op) => op.form)!;
      const form = `multipart/form-data; boundary=${FORM_BOUNDARY}`;
      const streamed = [
        { op: w.opsById.get("POST /v1/auth/login")!, caller: "none", type: "application/json", status: 413 },
        {
          op: withBody.find((op) => op.security === "management" && op.method === "POST")!,
          caller: "admin",
          type: "text/plain",
          status: 413,
        },
        { op: upload, caller: "participant", type: form, status: 413 },
        { op: upload, caller: "none", type: "application/json", status: 401 },
        { op: upload, caller: "participant", type: "application/json", status: 415 },
      ];
      for (const { op, caller, type, status } of streamed) {
        const limit = bodyLimitOf(w, op);
        const what = `${op.id} as ${caller}, ${type}`;
        const body = countedBody(64 * 1024 * 1024, type === form ? formHead() : '{"a":"');
        const header = w.callers.get(caller)!.header;
        const res = await w.t.app.request(pathOf(op), {
          method: op.method,
          headers: { "Content-Type": type, ...(header !== null ? { Authorization: header } : {}) },
          body: body.stream,
          duplex: "half",
        });
        expect(res.status, what).toBe(status);
        expect(await res.json(), what).toEqual({ error: expect.any(String) });
        // the upload's form is parsed as it arrives: its file's limit ends the read, short of the body's bound
        const refusedPast = op.form ? w.t.config.PARTICIPANT_FILE_MAX_BYTES : limit;
        if (status === 413) expect(body.pulled(), what).toBeGreaterThan(refusedPast);
        else expect(body.pulled(), what).toBe(0);
        expect(body.pulled(), what).toBeLessThanOrEqual(limit + 2 * 64 * 1024);
        tally.add(res.status, op.id);
      }
    },
  );

  it("changed no row of any table", async () => {
    expect(await rowCounts(w.t)).toEqual(before);
  });

  it("sent at least 5,000 requests, at least 100 to each operation (fewer when a property stopped at a failure)", () => {
    expect(all.total).toBeGreaterThanOrEqual(5_000);
    for (const op of w.ops) expect(all.byOperation.get(op.id) ?? 0, op.id).toBeGreaterThanOrEqual(100);
  });
});

describe("fuzz: well-formed requests that may succeed", () => {
  let w: World;
  let refreshToken: string;
  const tally = new Tally();
  const SESSION = "participant (session)";

  /**
   * A signed-in session as well (as the participant app holds one), so that renewal, sign-out,
   * codes and re-authenticated routes have a session to work on; renewals send its refresh token.
   * Signed in again whenever it has ended (sign-out, a renewal's reuse).
   */
  async function signIn() {
    const res = await w.t.app.request("/v1/auth/login", {
      method: "POST",
      headers: { "Content-Type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({ email: w.email, password: STRONG_PASSWORD }),
    });
    expect(res.status).toBe(200);
    const { token } = (await res.json()) as { token: { accessToken: string; refreshToken: string } };
    refreshToken = token.refreshToken;
    w.callers.set(SESSION, { name: SESSION, header: `Bearer ${token.accessToken}`, kind: "participant" });
  }

  beforeAll(async () => {
    w = await createWorld();
    await signIn();
  });
  afterAll(async () => {
    console.log(
      `fuzz (may succeed): ${tally.total} requests, answers by status: ${JSON.stringify(tally.statuses())}\n` +
        `fuzz, whole file: ${everything.total} requests, answers by status: ${JSON.stringify(everything.statuses())}`,
    );
    await w.t.close();
  });

  it("never answer 5xx, and refuse with a plain error body", { timeout: 600_000 }, async () => {
    const strongPassword = fc.string({
      unit: fc.constantFrom(..."abcdefghjkmnpqrstuvwxyz23456789-"),
      minLength: 14,
      maxLength: 30,
    });
    const conformance: Conformance = {
      schemas: w.schemas,
      properties: {
        profileID: fc.constant(w.profileId),
        profileId: fc.constantFrom(...w.profileIds),
        pid: fc.constant(w.profileId),
        pids: fc.constant(w.profileId),
        instanceID: fc.constant(w.t.config.INSTANCE_ID),
        instanceId: fc.constant(w.t.config.INSTANCE_ID),
        studyKey: fc.constant(EXISTING_STUDY),
        trackAccount: fc.boolean(),
        refreshToken: fc.constant(null).map(() => refreshToken),
        // new accounts (sign-up), passwords the policy takes (though never the fuzz user's)
        email: fc.uuid().map((id) => `fuzz-${id}@example.org`),
        password: strongPassword,
        newPassword: strongPassword,
      },
      components: { Expression: fc.constantFrom(...VALID_RULES) },
    };
    const arb = fc.oneof(
      ...w.ops.map((op) =>
        draftArb(op, {
          // the session could delete the account (a recent sign-in stands for the password), after
          // which every participant request would be a 401
          callers:
            op.security !== "participant"
              ? fc.constant("admin")
              : op.id === "DELETE /v1/user"
                ? fc.constant("participant")
                : fc.constantFrom("participant", SESSION),
          mutation: () => fc.constant({ kind: "none" as const }),
          conformance,
          params: (name) =>
            name === "studyKey"
              ? fc.constant(EXISTING_STUDY)
              : name === "participantID"
                ? fc.constantFrom("p1", "p2")
                : paramArb(name),
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(arb, async (draft) => {
        const status = await exchange(w, build(w, draft, { allowWrites: true }), [everything, tally], false);
        if (draft.caller === SESSION && status === 401) await signIn();
      }),
      { numRuns: RUNS.maySucceed },
    );
  });
});
