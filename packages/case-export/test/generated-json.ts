/**
 * Generated submissions for the tests that compare reading a response from its JSON text with
 * reading it parsed: real answers (templates) changed at random in every way a stored document can
 * differ from what the survey engine sends (answers dropped, repeated, re-keyed, values of any JSON
 * type, junk elements and members, odd meta), written as JSON text with random spacing, escapes,
 * number spellings and members given twice. A seed makes each case reproducible.
 */

/** A deterministic random source (mulberry32). */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

/** An object whose members are written in this order, a name possibly twice (JSON.parse keeps the last). */
export class Members {
  constructor(readonly members: [string, unknown][]) {}
}

/** A number written with exactly this text (`1.0`, `-0`, `1E2`, `1e400`). */
export class NumberText {
  constructor(readonly text: string) {}
}

const pick = <T>(rnd: Random, values: readonly T[]): T => values[Math.floor(rnd() * values.length)]!;
const chance = (rnd: Random, p: number) => rnd() < p;

/** Code units that are easy to get wrong: escapes, controls, quotes, non-ASCII, astral, lone surrogates. */
const UNITS = [
  "a",
  "Z",
  "0",
  " ",
  ",",
  '"',
  "\\",
  "/",
  "\n",
  "\r",
  "\t",
  "\b",
  "\f",
  "\u0001",
  "\u001f",
  "=",
  "+",
  "-",
  "@",
  "{",
  "}",
  "[",
  "]",
  ":",
  "<",
  ">",
  "&",
  "é",
  "中",
  "\u2028",
  "\u2029",
  "😀",
  "\ud800",
  "\udc00",
  "\uffff",
];

const TRICKY = [
  "",
  "x",
  "=1+2",
  "-5",
  "+3.5",
  "a,b",
  'say "hi"',
  "line\nbreak",
  "cr\r\nlf",
  " lead",
  "\\.",
  "ünï",
  "TRUE",
  "1e21",
  "rg",
  "true",
  "null",
  "__proto__",
  "constructor",
];

export function randomText(rnd: Random): string {
  if (chance(rnd, 0.4)) return pick(rnd, TRICKY);
  let s = "";
  const n = Math.floor(rnd() * 8);
  for (let i = 0; i < n; i++) s += pick(rnd, UNITS);
  return s;
}

const NUMBERS = ["0", "-0", "1.0", "38.50", "1E2", "1e-7", "-12.75", "1e21", "1e400", "123456789012345678901", "5"];

/** Any JSON value, small: what a stored document may hold where a string or an object was expected. */
export function junk(rnd: Random, depth = 0): unknown {
  const kind = Math.floor(rnd() * (depth > 2 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return chance(rnd, 0.5);
    case 2:
      return new NumberText(pick(rnd, NUMBERS));
    case 3:
      return randomText(rnd);
    case 4:
      return pick(rnd, ["}", "]", '"}]{["', "{", "[[["]);
    case 5:
      return Array.from({ length: Math.floor(rnd() * 3) }, () => junk(rnd, depth + 1));
    default:
      return new Members(
        Array.from({ length: Math.floor(rnd() * 3) }, () => [
          pick(rnd, ["key", "items", "value", "x", "meta"]),
          junk(rnd, depth + 1),
        ]),
      );
  }
}

/** A string member's value: mostly text, sometimes a number, a boolean or something else. */
function scalar(rnd: Random, original: unknown): unknown {
  const r = rnd();
  if (r < 0.75) return original;
  if (r < 0.88) return randomText(rnd);
  if (r < 0.93) return new NumberText(pick(rnd, NUMBERS));
  if (r < 0.96) return chance(rnd, 0.5);
  return junk(rnd);
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Members) && !(v instanceof NumberText);

/** A response tree node changed at random; `keys` are the keys answers use (re-keying draws from them). */
function mutateNode(node: unknown, rnd: Random, keys: readonly string[], depth: number): unknown {
  if (!isPlain(node)) return node;
  const members: [string, unknown][] = [];
  for (const [name, value] of Object.entries(node)) {
    if (chance(rnd, 0.03)) continue;
    if (name === "items" && Array.isArray(value)) {
      if (chance(rnd, 0.03)) members.push([name, junk(rnd)]);
      else members.push([name, mutateList(value, rnd, keys, depth + 1)]);
    } else if (name === "key") {
      members.push([name, chance(rnd, 0.1) ? pick(rnd, keys) : scalar(rnd, value)]);
    } else members.push([name, scalar(rnd, value)]);
  }
  if (!("value" in node) && chance(rnd, 0.08)) members.push(["value", scalar(rnd, randomText(rnd))]);
  if (!("items" in node) && depth < 5 && chance(rnd, 0.05))
    members.push(["items", [{ key: pick(rnd, keys) }].map((n) => mutateNode(n, rnd, keys, depth + 1))]);
  if (chance(rnd, 0.04)) members.push([pick(rnd, ["dtype", "extra", "Key", "kéy"]), junk(rnd)]);
  decoys(rnd, members);
  shuffleSome(rnd, members);
  return new Members(members);
}

function mutateList(list: readonly unknown[], rnd: Random, keys: readonly string[], depth: number): unknown[] {
  const out: unknown[] = [];
  for (const child of list) {
    if (chance(rnd, 0.06)) continue;
    out.push(mutateNode(child, rnd, keys, depth));
    if (chance(rnd, 0.04)) out.push(mutateNode(child, rnd, keys, depth));
    if (chance(rnd, 0.03)) out.push(junk(rnd));
  }
  if (chance(rnd, 0.05)) out.push(mutateNode({ key: pick(rnd, keys) }, rnd, keys, depth));
  return out;
}

/** A member given twice: an earlier decoy that JSON.parse overwrites with the later value. */
function decoys(rnd: Random, members: [string, unknown][]): void {
  if (members.length > 0 && chance(rnd, 0.05)) {
    const [name] = pick(rnd, members);
    members.splice(0, 0, [name, junk(rnd)]);
  }
}

function shuffleSome(rnd: Random, members: unknown[]): void {
  if (!chance(rnd, 0.2)) return;
  for (let i = members.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [members[i], members[j]] = [members[j], members[i]];
  }
}

function mutateMeta(meta: unknown, rnd: Random): unknown {
  if (chance(rnd, 0.08)) return junk(rnd);
  if (!isPlain(meta)) return meta;
  const members: [string, unknown][] = [];
  for (const [name, value] of Object.entries(meta)) {
    if (chance(rnd, 0.05)) continue;
    if (Array.isArray(value)) {
      members.push([
        name,
        chance(rnd, 0.1)
          ? junk(rnd)
          : (value as unknown[]).map((t) =>
              chance(rnd, 0.1) ? pick<unknown>(rnd, [new NumberText("1.5"), "12", null, -3, 1e300]) : t,
            ),
      ]);
    } else if (name === "position" && chance(rnd, 0.2)) {
      members.push([name, pick(rnd, [new NumberText("2.9"), new NumberText("-0"), "3", null, 1e21, -4])]);
    } else members.push([name, value]);
  }
  if (chance(rnd, 0.1)) members.push(["rendered", [new NumberText("1e400"), 7]]);
  decoys(rnd, members);
  shuffleSome(rnd, members);
  return new Members(members);
}

/** Every `key` in a value, depth first (the keys a survey's answers use). */
export function keysIn(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysIn(v, into);
  else if (isPlain(value)) {
    for (const [name, v] of Object.entries(value)) {
      if (name === "key" && typeof v === "string") into.add(v);
      else keysIn(v, into);
    }
  }
  return into;
}

/**
 * A submission made from `templates` (item responses as the engine sends them): items dropped,
 * repeated, re-keyed, reordered, junk elements in between, and each item's response and meta
 * changed as above.
 */
export function mutatedSubmission(templates: readonly unknown[], rnd: Random, keys: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const template of templates) {
    if (chance(rnd, 0.1)) continue;
    if (chance(rnd, 0.03)) out.push(junk(rnd));
    if (!isPlain(template)) continue;
    const members: [string, unknown][] = [];
    for (const [name, value] of Object.entries(template)) {
      if (name === "key") members.push([name, chance(rnd, 0.05) ? pick(rnd, keys) : scalar(rnd, value)]);
      else if (name === "meta") members.push([name, mutateMeta(value, rnd)]);
      else if (name === "response")
        members.push([name, chance(rnd, 0.05) ? pick(rnd, [null, [], "x", 3]) : mutateNode(value, rnd, keys, 0)]);
      else members.push([name, value]);
    }
    if (chance(rnd, 0.04)) members.push(["confidentialMode", junk(rnd)]);
    decoys(rnd, members);
    shuffleSome(rnd, members);
    out.push(new Members(members));
    if (chance(rnd, 0.04)) out.push(new Members([...members]));
  }
  shuffleSome(rnd, out);
  return out;
}

// ----- writing ---------------------------------------------------------------------------------

const HEX = "0123456789abcdef";

function escapedUnit(c: number, rnd: Random): string {
  const hex = HEX[(c >> 12) & 15]! + HEX[(c >> 8) & 15]! + HEX[(c >> 4) & 15]! + HEX[c & 15]!;
  return "\\u" + (chance(rnd, 0.5) ? hex : hex.toUpperCase());
}

function stringText(s: string, rnd: Random, plain: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (c === 0x22) out += plain || chance(rnd, 0.8) ? '\\"' : escapedUnit(c, rnd);
    else if (c === 0x5c) out += plain || chance(rnd, 0.8) ? "\\\\" : escapedUnit(c, rnd);
    else if (c < 0x20) {
      const short = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" }[c];
      out += short !== undefined && (plain || chance(rnd, 0.7)) ? short : escapedUnit(c, rnd);
    } else if (!plain && c === 0x2f && chance(rnd, 0.5)) out += "\\/";
    else if (!plain && chance(rnd, 0.03)) out += escapedUnit(c, rnd);
    else out += ch;
  }
  return out + '"';
}

/**
 * JSON text of a value made of Members, NumberText, arrays and plain values. `plain` writes it as
 * PostgreSQL's jsonb does (", " and ": ", the short escapes only); otherwise spacing, escapes and
 * escaped member names vary at random.
 */
export function jsonText(value: unknown, rnd: Random, plain = false): string {
  const space = () => (plain ? "" : pick(rnd, ["", "", "", " ", "\n", "\t ", "\r\n  "]));
  const write = (v: unknown): string => {
    if (v === null || v === undefined) return "null";
    if (v instanceof NumberText) return v.text;
    if (typeof v === "number") return JSON.stringify(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "string") return stringText(v, rnd, plain);
    if (Array.isArray(v))
      return "[" + space() + v.map(write).join(plain ? ", " : space() + "," + space()) + space() + "]";
    const members = v instanceof Members ? v.members : Object.entries(v as Record<string, unknown>);
    const body = members
      .map(([name, m]) => {
        const written =
          !plain && chance(rnd, 0.03)
            ? '"' + Array.from({ length: name.length }, (_, i) => escapedUnit(name.charCodeAt(i), rnd)).join("") + '"'
            : stringText(name, rnd, plain);
        return written + (plain ? ": " : space() + ":" + space()) + write(m);
      })
      .join(plain ? ", " : space() + "," + space());
    return "{" + space() + body + space() + "}";
  };
  return space() + write(value) + space();
}
