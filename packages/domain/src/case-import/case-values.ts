import { createHash } from "node:crypto";
import { deserialize } from "bson";

/**
 * From case-backend's BSON to the JSON studyflow stores. The Go driver writes ObjectIDs, int64
 * times (promoted to numbers here when they fit), int32s and nested documents; the JSON a CASE
 * client sees has ObjectIDs as hex and a few fields named differently (Go's bson and json tags).
 */

export type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };

/** A document as the bson package reads it, numbers promoted where they fit. */
export type CaseDocument = Record<string, unknown>;

/**
 * `rawFields`: array fields whose documents stay bytes (a Buffer each), for an importer that
 * writes them out as JSON without reading them into objects (bson-json.ts).
 */
export function deserializeCaseDocument(bytes: Buffer, rawFields?: Readonly<Record<string, boolean>>): CaseDocument {
  return deserialize(bytes, {
    promoteLongs: true,
    promoteValues: true,
    promoteBuffers: false,
    ...(rawFields === undefined ? {} : { fieldsAsRaw: rawFields }),
  });
}

const bsonType = (value: object): string | undefined => (value as { _bsontype?: string })._bsontype;

/**
 * A BSON value as JSON: ObjectId → hex, Long → number, Date → ISO text, Binary → base64,
 * Decimal128 → text. `rename` maps a document key to the JSON field it becomes (e.g. `_id` → `id`).
 */
export function toPlain(value: unknown, rename: Readonly<Record<string, string>> = {}): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map((item) => toPlain(item, rename));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") {
    switch (bsonType(value)) {
      case "ObjectId":
      case "ObjectID":
        return (value as { toHexString: () => string }).toHexString();
      case "Long":
      case "Int32":
      case "Double":
        return Number(value.valueOf());
      case "Decimal128":
        return (value as { toString: () => string }).toString();
      case "Binary":
        return Buffer.from((value as { buffer: Uint8Array }).buffer).toString("base64");
      case "Timestamp":
        return Number((value as { t: number }).t);
      case undefined:
        break;
      default:
        // Code, Symbol, MinKey, MaxKey, BSONRegExp: CASE's types write none of them
        return (value as { toString: () => string }).toString();
    }
    const plain: Record<string, Plain> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      plain[rename[key] ?? key] = toPlain(item, rename);
    }
    return plain;
  }
  return null;
}

/** The source document's id as the report names it: an ObjectId's hex, else its text. */
export function documentId(document: CaseDocument | undefined): string {
  const id = document?.["_id"];
  if (id === undefined || id === null) return "";
  const plain = toPlain(id);
  return typeof plain === "string" ? plain : JSON.stringify(plain);
}

/** SHA-256 of a document's bytes: the same document dumped again hashes the same. */
export const contentHash = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** JSON with keys sorted, so two values compare equal whatever order their keys came in (jsonb's or BSON's). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
}

const OBJECT_ID = /^[0-9a-f]{24}$/;

export const isObjectIdHex = (text: string) => OBJECT_ID.test(text);

/** How every id caseAccountUuid gives begins (a random UUID does so once in 4 billion). */
export const CASE_UUID_PREFIX = "00000000-";

/**
 * The users.id of a CASE account that studyflow did not have: its ObjectId inside a UUID
 * (`00000000-oooo-oooo-oooo-oooooooooooo`), so the account id stays readable and every run
 * gives the same one. case_import_records keeps the pair either way.
 */
export function caseAccountUuid(objectIdHex: string): string {
  const id = objectIdHex.toLowerCase();
  return `${CASE_UUID_PREFIX}${id.slice(0, 4)}-${id.slice(4, 8)}-${id.slice(8, 12)}-${id.slice(12, 24)}`;
}

/** An int64 of Unix seconds as a Date; 0 and absent (Go's zero value) as null. */
export function unixSecondsDate(value: unknown): Date | null {
  const seconds = typeof value === "number" ? value : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
}

export const asString = (value: unknown): string => (typeof value === "string" ? value : "");

export const asNumber = (value: unknown): number => {
  const number = typeof value === "number" ? value : Number(value ?? 0);
  return Number.isFinite(number) ? Math.trunc(number) : 0;
};

export const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
