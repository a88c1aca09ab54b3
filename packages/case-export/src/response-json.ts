/**
 * A response's item responses read straight from its JSON text, as `readItemResponses(JSON.parse(
 * text))` reads them, without building the parsed document first. An export reads a few strings of
 * each item's response tree; parsing the whole document into objects and then copying the parts it
 * needs into ResponseItems cost the export workers more than formatting did, and left most of their
 * garbage. Here each ResponseItem is built once, and what no column reads (the items' `meta`, unless
 * a meta column is asked for, and any member the export does not know) is passed over.
 *
 * The text is PostgreSQL's jsonb output, which is always valid JSON. For valid JSON the result
 * equals readItemResponses(JSON.parse(text)), with one deliberate exception: without `withMeta`,
 * each item's position is 0 and its times are null. Where the members this reads are not valid
 * JSON, or the top level is no array, the answer is null: the caller then parses the text, which
 * fails or reads it as before. (Values passed over are followed only as far as strings and nesting.)
 */
import type { ItemResponse, ResponseItem } from "./response-items";

/** Thrown where the text is not valid JSON: one instance, made once, so that throwing costs nothing. */
class InvalidJson extends Error {}
const INVALID = new InvalidJson("not valid JSON");

/** The text being read and the position in it; module state, reset by every call. */
let src = "";
let pos = 0;

const NO_ITEMS: ResponseItem[] = [];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The members this reader looks at, by name. */
const enum Member {
  Other,
  Key,
  Value,
  Dtype,
  Items,
  Response,
  Meta,
  Position,
  Rendered,
  Displayed,
  Responded,
}

export function readItemResponsesJson(text: string, withMeta: boolean): ItemResponse[] | null {
  src = text;
  pos = 0;
  try {
    skipSpace();
    // valid or not, the caller's JSON.parse decides what a top level other than an array means
    if (src.charCodeAt(pos) !== OPEN_BRACKET) return null;
    pos++;
    skipSpace();
    const out: ItemResponse[] = [];
    if (src.charCodeAt(pos) === CLOSE_BRACKET) pos++;
    else {
      do {
        if (src.charCodeAt(pos) === OPEN_BRACE) out.push(readItemResponse(withMeta));
        else skipValue();
      } while (next(CLOSE_BRACKET));
    }
    skipSpace();
    if (pos !== src.length) throw INVALID;
    return out;
  } catch (error) {
    // not valid JSON, or nested deeper than this reader's stack: the caller's JSON.parse decides
    if (error === INVALID || error instanceof RangeError) return null;
    throw error;
  } finally {
    src = "";
  }
}

function skipSpace(): void {
  const s = src;
  let i = pos;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else break;
  }
  pos = i;
}

/** After a member or element: true when another follows (the comma read), false at `close`. */
function next(close: number): boolean {
  const s = src;
  let c = s.charCodeAt(pos);
  // PostgreSQL writes ", " between members and elements
  if (c === COMMA && s.charCodeAt(pos + 1) === 0x20 && !isSpace(s.charCodeAt(pos + 2))) {
    pos += 2;
    return true;
  }
  skipSpace();
  c = s.charCodeAt(pos++);
  if (c === COMMA) {
    skipSpace();
    return true;
  }
  if (c === close) return false;
  throw INVALID;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** A member name at `pos` and its colon: which member it is. */
function readMember(): Member {
  const s = src;
  if (s.charCodeAt(pos) !== QUOTE) throw INVALID;
  const start = pos + 1;
  let i = start;
  let member: Member;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      member = memberAt(s, start, i - start);
      // PostgreSQL writes ": " after a name
      if (s.charCodeAt(i + 1) === COLON && s.charCodeAt(i + 2) === 0x20 && !isSpace(s.charCodeAt(i + 3))) {
        pos = i + 3;
        return member;
      }
      pos = i + 1;
      break;
    }
    if (c === BACKSLASH) {
      // an escaped name (`"k\u0065y"` is `key`): rare, decoded
      const name = readString();
      member = memberAt(name, 0, name.length);
      break;
    }
    if (c < 0x20 || Number.isNaN(c)) throw INVALID;
    i++;
  }
  skipSpace();
  if (s.charCodeAt(pos) !== COLON) throw INVALID;
  pos++;
  skipSpace();
  return member;
}

function memberAt(s: string, start: number, length: number): Member {
  switch (length) {
    case 3:
      return s.startsWith("key", start) ? Member.Key : Member.Other;
    case 4:
      return s.startsWith("meta", start) ? Member.Meta : Member.Other;
    case 5:
      if (s.startsWith("items", start)) return Member.Items;
      if (s.startsWith("value", start)) return Member.Value;
      return s.startsWith("dtype", start) ? Member.Dtype : Member.Other;
    case 8:
      if (s.startsWith("response", start)) return Member.Response;
      if (s.startsWith("position", start)) return Member.Position;
      return s.startsWith("rendered", start) ? Member.Rendered : Member.Other;
    case 9:
      if (s.startsWith("displayed", start)) return Member.Displayed;
      return s.startsWith("responded", start) ? Member.Responded : Member.Other;
    default:
      return Member.Other;
  }
}

/** A string at `pos` (its opening quote), decoded as JSON.parse decodes it. */
function readString(): string {
  const s = src;
  const start = pos + 1;
  let i = start;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      pos = i + 1;
      return s.slice(start, i);
    }
    if (c === BACKSLASH) break;
    if (c < 0x20 || Number.isNaN(c)) throw INVALID;
    i++;
  }
  let out = s.slice(start, i);
  let run = i;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      pos = i + 1;
      return out + s.slice(run, i);
    }
    if (c === BACKSLASH) {
      out += s.slice(run, i) + unescaped(s, i + 1);
      i += s.charCodeAt(i + 1) === 0x75 ? 6 : 2;
      run = i;
      continue;
    }
    if (c < 0x20 || Number.isNaN(c)) throw INVALID;
    i++;
  }
}

/** The character an escape stands for; `at` is the character after the backslash. */
function unescaped(s: string, at: number): string {
  switch (s.charCodeAt(at)) {
    case QUOTE:
      return '"';
    case BACKSLASH:
      return "\\";
    case 0x2f:
      return "/";
    case 0x62:
      return "\b";
    case 0x66:
      return "\f";
    case 0x6e:
      return "\n";
    case 0x72:
      return "\r";
    case 0x74:
      return "\t";
    case 0x75: {
      let code = 0;
      for (let k = 1; k <= 4; k++) {
        const h = hexValue(s.charCodeAt(at + k));
        if (h < 0) throw INVALID;
        code = code * 16 + h;
      }
      // a lone surrogate stays as it is, as JSON.parse keeps it
      return String.fromCharCode(code);
    }
    default:
      throw INVALID;
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** A number, checked against JSON's grammar, converted as JSON.parse converts it. */
function readNumber(): number {
  const s = src;
  const start = pos;
  let i = pos;
  if (s.charCodeAt(i) === MINUS) i++;
  const first = s.charCodeAt(i);
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) while (isDigit(s.charCodeAt(++i)));
  else throw INVALID;
  if (s.charCodeAt(i) === 0x2e) {
    if (!isDigit(s.charCodeAt(++i))) throw INVALID;
    while (isDigit(s.charCodeAt(++i)));
  }
  const e = s.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    const sign = s.charCodeAt(++i);
    if (sign === 0x2b || sign === MINUS) i++;
    if (!isDigit(s.charCodeAt(i))) throw INVALID;
    while (isDigit(s.charCodeAt(++i)));
  }
  pos = i;
  return Number(s.slice(start, i));
}

function readLiteral(literal: string): void {
  if (!src.startsWith(literal, pos)) throw INVALID;
  pos += literal.length;
}

/**
 * A value passed over without building it: only strings (where a bracket is text) and the
 * nesting are followed.
 */
function skipValue(): void {
  const s = src;
  let i = pos;
  const first = s.charCodeAt(i);
  if (first === QUOTE) {
    pos = stringEnd(s, i);
    return;
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // a number or a literal: up to the next delimiter
    for (;;) {
      const c = s.charCodeAt(++i);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c <= 0x20 || Number.isNaN(c)) break;
    }
    if (first === COMMA || first === CLOSE_BRACE || first === CLOSE_BRACKET || first <= 0x20 || Number.isNaN(first))
      throw INVALID;
    pos = i;
    return;
  }
  let depth = 1;
  i++;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(s, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      i++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      i++;
      if (--depth === 0) break;
    } else if (Number.isNaN(c)) throw INVALID;
    else i++;
  }
  pos = i;
}

/** The index after the string whose opening quote is at `i`. */
function stringEnd(s: string, i: number): number {
  for (;;) {
    const end = s.indexOf('"', i + 1);
    if (end === -1) throw INVALID;
    // escaped when an odd number of backslashes precede it
    let backslashes = 0;
    while (s.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return end + 1;
    i = end;
  }
}

/** A value read into a Go string field (stringOf): strings, numbers and booleans as text, else "". */
function readStringField(): string {
  const c = src.charCodeAt(pos);
  if (c === QUOTE) return readString();
  if (c === 0x74) {
    readLiteral("true");
    return "true";
  }
  if (c === 0x66) {
    readLiteral("false");
    return "false";
  }
  if (c === MINUS || isDigit(c)) return String(readNumber());
  skipValue();
  return "";
}

/** A value read into an int64 field (int64Of): whole numbers, anything else 0. */
function readInt64Field(): number {
  const c = src.charCodeAt(pos);
  if (c === MINUS || isDigit(c)) {
    const n = readNumber();
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }
  skipValue();
  return 0;
}

/** A timestamps array (null when the value is no array). */
function readTimestamps(): number[] | null {
  if (src.charCodeAt(pos) !== OPEN_BRACKET) {
    skipValue();
    return null;
  }
  pos++;
  skipSpace();
  const out: number[] = [];
  if (src.charCodeAt(pos) === CLOSE_BRACKET) {
    pos++;
    return out;
  }
  do out.push(readInt64Field());
  while (next(CLOSE_BRACKET));
  return out;
}

/** An element of the top-level array that is an object: a SurveyItemResponse. */
function readItemResponse(withMeta: boolean): ItemResponse {
  pos++;
  skipSpace();
  const item: ItemResponse = { key: "", response: null, position: 0, rendered: null, displayed: null, responded: null };
  if (src.charCodeAt(pos) === CLOSE_BRACE) {
    pos++;
    return item;
  }
  // a member given twice counts as JSON.parse counts it: the last one
  do {
    switch (readMember()) {
      case Member.Key:
        item.key = readStringField();
        break;
      case Member.Response:
        if (src.charCodeAt(pos) === OPEN_BRACE) item.response = readResponseItem();
        else {
          skipValue();
          item.response = null;
        }
        break;
      case Member.Meta:
        if (withMeta) readMeta(item);
        else skipValue();
        break;
      default:
        skipValue();
    }
  } while (next(CLOSE_BRACE));
  return item;
}

/** An item's meta: one that is no object reads as `{}`. */
function readMeta(item: ItemResponse): void {
  item.position = 0;
  item.rendered = null;
  item.displayed = null;
  item.responded = null;
  if (src.charCodeAt(pos) !== OPEN_BRACE) {
    skipValue();
    return;
  }
  pos++;
  skipSpace();
  if (src.charCodeAt(pos) === CLOSE_BRACE) {
    pos++;
    return;
  }
  do {
    switch (readMember()) {
      case Member.Position:
        item.position = readInt64Field();
        break;
      case Member.Rendered:
        item.rendered = readTimestamps();
        break;
      case Member.Displayed:
        item.displayed = readTimestamps();
        break;
      case Member.Responded:
        item.responded = readTimestamps();
        break;
      default:
        skipValue();
    }
  } while (next(CLOSE_BRACE));
}

/** A response tree node at `pos` (an object), as readResponseItem reads it. */
function readResponseItem(): ResponseItem {
  pos++;
  skipSpace();
  const node: ResponseItem = { key: "", value: "", dtype: "", items: NO_ITEMS };
  if (src.charCodeAt(pos) === CLOSE_BRACE) {
    pos++;
    return node;
  }
  do {
    switch (readMember()) {
      case Member.Key:
        node.key = readStringField();
        break;
      case Member.Value:
        node.value = readStringField();
        break;
      case Member.Dtype:
        node.dtype = readStringField();
        break;
      case Member.Items:
        node.items = readItems();
        break;
      default:
        skipValue();
    }
  } while (next(CLOSE_BRACE));
  return node;
}

/** A node's `items`: its object children (others skipped); no array, or an empty one, is none. */
function readItems(): ResponseItem[] {
  if (src.charCodeAt(pos) !== OPEN_BRACKET) {
    skipValue();
    return NO_ITEMS;
  }
  pos++;
  skipSpace();
  if (src.charCodeAt(pos) === CLOSE_BRACKET) {
    pos++;
    return NO_ITEMS;
  }
  const items: ResponseItem[] = [];
  do {
    if (src.charCodeAt(pos) === OPEN_BRACE) items.push(readResponseItem());
    else skipValue();
  } while (next(CLOSE_BRACKET));
  return items;
}
