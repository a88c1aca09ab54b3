import { isUtf8 } from "node:buffer";
import { deserializeCaseDocument, toPlain } from "./case-values";

/**
 * BSON straight to the JSON text studyflow stores, for the bulk of an import: the answers of
 * survey responses. Reading them into objects with the bson package, checking them for BSON types
 * and writing them out with JSON.stringify was half the import's time and most of its garbage; this
 * writes the text from the bytes in one pass. It gives the text `JSON.stringify(toPlain(…))` gives
 * for the types participant apps' answers are made of (strings, numbers, booleans, null, documents,
 * arrays, ObjectIds, dates); a document holding any other type (decimal, binary, a 64-bit integer
 * past 2^53, …) goes through the bson package and `toPlain` as before. The bson package has no
 * reader from bytes to JSON text (its EJSON goes through the same objects).
 */

/** JSON text to be written as it is: `toJSON` gives its value, for the code that needs one. */
export class JsonText {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A value the one-pass reader leaves to the bson package. */
class NotTranscoded extends Error {}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
const TWO_32 = 4_294_967_296;
/** An int64 whose high word is in this range is a number the bson package promotes exactly (|n| < 2^53). */
const SAFE_HIGH = 2_097_152;

/** Text of UTF-8 bytes; bytes that are not UTF-8 are the bson package's to refuse. */
function utf8(bytes: Buffer, start: number, end: number): string {
  if (end < start) throw new NotTranscoded();
  const text = bytes.toString("utf8", start, end);
  // decoding puts U+FFFD where bytes are not UTF-8; only then are the bytes checked (the text may hold one)
  if (text.includes("\uFFFD") && !isUtf8(bytes.subarray(start, end))) throw new NotTranscoded();
  return text;
}

/**
 * Printable ASCII without a quote or backslash (most keys and answer codes) as JSON text, read as
 * latin1 with no decoding or escaping; undefined for anything else.
 */
function quotedAscii(bytes: Buffer, start: number, end: number): string | undefined {
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 || byte > 0x7e || byte === 0x22 || byte === 0x5c) return undefined;
  }
  return `"${bytes.toString("latin1", start, end)}"`;
}

/** A string's bytes as JSON text. */
const quotedText = (bytes: Buffer, start: number, end: number): string =>
  quotedAscii(bytes, start, end) ?? JSON.stringify(utf8(bytes, start, end));

/**
 * Keys as JSON text, by a hash of their bytes: a dump repeats the same few dozen keys millions of
 * times. An entry is used only when its bytes are the key's.
 */
const keyCache = new Map<number, { raw: Buffer; quoted: string }>();
const KEY_CACHE_LIMIT = 4096;

function quotedKey(bytes: Buffer, start: number, end: number, hash: number): string {
  const cached = keyCache.get(hash);
  if (cached !== undefined && cached.raw.length === end - start) {
    let same = true;
    for (let i = 0; i < cached.raw.length; i++) {
      if (cached.raw[i] !== bytes[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return cached.quoted;
  }
  const quoted = quotedText(bytes, start, end);
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
  keyCache.set(hash, { raw: Buffer.from(bytes.subarray(start, end)), quoted });
  return quoted;
}

/** The document (or array) at `start`, as JSON text. */
function documentJson(bytes: Buffer, start: number, isArray: boolean): string {
  const end = start + bytes.readInt32LE(start);
  if (end > bytes.length || bytes[end - 1] !== 0) throw new NotTranscoded();
  let at = start + 4;
  let json = "";
  while (at < end - 1) {
    const type = bytes[at++]!;
    let keyEnd = at;
    let hash = 0;
    while (keyEnd < end && bytes[keyEnd] !== 0) hash = (Math.imul(hash, 31) + bytes[keyEnd++]!) | 0;
    if (keyEnd >= end - 1) throw new NotTranscoded();
    const key = isArray ? "" : quotedKey(bytes, at, keyEnd, hash);
    // a document with $ref is a DBRef to the bson package
    if (key === '"$ref"') throw new NotTranscoded();
    at = keyEnd + 1;
    let value: string;
    switch (type) {
      case 0x01: {
        const number = bytes.readDoubleLE(at);
        at += 8;
        value = Number.isFinite(number) ? JSON.stringify(number) : "null";
        break;
      }
      case 0x02: {
        const length = bytes.readInt32LE(at);
        const from = at + 4;
        const to = from + length - 1;
        if (length < 1 || bytes[to] !== 0) throw new NotTranscoded();
        value = quotedText(bytes, from, to);
        at = to + 1;
        break;
      }
      case 0x03:
      case 0x04: {
        value = documentJson(bytes, at, type === 0x04);
        at += bytes.readInt32LE(at);
        break;
      }
      case 0x06: // undefined: left out of a document, null in an array
        if (!isArray) continue;
        value = "null";
        break;
      case 0x07: {
        let hex = '"';
        for (let i = at; i < at + 12; i++) hex += HEX[bytes[i]!];
        value = `${hex}"`;
        at += 12;
        break;
      }
      case 0x08: {
        const flag = bytes[at++];
        if (flag !== 0 && flag !== 1) throw new NotTranscoded();
        value = flag === 1 ? "true" : "false";
        break;
      }
      case 0x09: {
        const high = bytes.readInt32LE(at + 4);
        if (high < -SAFE_HIGH || high >= SAFE_HIGH) throw new NotTranscoded();
        const date = new Date(high * TWO_32 + bytes.readUInt32LE(at));
        if (!Number.isFinite(date.getTime())) throw new NotTranscoded();
        value = `"${date.toISOString()}"`;
        at += 8;
        break;
      }
      case 0x0a:
        value = "null";
        break;
      case 0x10:
        value = String(bytes.readInt32LE(at));
        at += 4;
        break;
      case 0x12: {
        const high = bytes.readInt32LE(at + 4);
        if (high < -SAFE_HIGH || high >= SAFE_HIGH) throw new NotTranscoded();
        value = String(high * TWO_32 + bytes.readUInt32LE(at));
        at += 8;
        break;
      }
      default:
        throw new NotTranscoded();
    }
    if (json !== "") json += ",";
    json += isArray ? value : `${key}:${value}`;
  }
  if (at !== end - 1) throw new NotTranscoded();
  return isArray ? `[${json}]` : `{${json}}`;
}

/** The JSON text of one BSON document: in one pass when it can, else through the bson package and toPlain. */
export function bsonDocumentJson(bytes: Buffer): string {
  try {
    return documentJson(bytes, 0, false);
  } catch (error) {
    if (!(error instanceof NotTranscoded) && !(error instanceof RangeError)) throw error;
    return JSON.stringify(toPlain(deserializeCaseDocument(bytes)));
  }
}

/**
 * An array field the bson package left raw (`fieldsAsRaw`): its documents as bytes, its other
 * elements read. Anything but an array is an empty array, as `toPlain` of it made one.
 */
export function rawArrayJson(value: unknown): JsonText {
  if (!Array.isArray(value)) return new JsonText("[]");
  const items = value.map((item) =>
    Buffer.isBuffer(item) ? bsonDocumentJson(item) : JSON.stringify(toPlain(item) ?? null),
  );
  return new JsonText(`[${items.join(",")}]`);
}
