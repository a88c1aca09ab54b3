/**
 * Submitted survey-engine responses read as CASE's Go types read them from its database: values are
 * strings, absent fields are empty, null entries are skipped.
 */
import { goJsonString, int64Of, stringOf } from "./go-json";

/** A node of a response tree (survey-engine ResponseItem). */
export interface ResponseItem {
  key: string;
  value: string;
  dtype: string;
  items: ResponseItem[];
}

/** One item's response (survey-engine SurveyItemResponse), with the meta the exports can show. */
export interface ItemResponse {
  key: string;
  response: ResponseItem | null;
  position: number;
  rendered: number[] | null;
  displayed: number[] | null;
  responded: number[] | null;
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const NO_ITEMS: ResponseItem[] = [];

export function readResponseItem(raw: Json): ResponseItem {
  const rawItems = raw["items"];
  let items = NO_ITEMS;
  if (Array.isArray(rawItems) && rawItems.length > 0) {
    items = [];
    for (const child of rawItems) if (isRecord(child)) items.push(readResponseItem(child));
  }
  return { key: stringOf(raw["key"]), value: stringOf(raw["value"]), dtype: stringOf(raw["dtype"]), items };
}

function timestamps(v: unknown): number[] | null {
  if (!Array.isArray(v)) return null;
  const out: number[] = [];
  for (const t of v) out.push(int64Of(t));
  return out;
}

/** The top-level item responses of a submission, in order. */
export function readItemResponses(raw: readonly unknown[]): ItemResponse[] {
  const out: ItemResponse[] = [];
  for (const r of raw) {
    if (!isRecord(r)) continue;
    const meta = isRecord(r["meta"]) ? r["meta"] : {};
    const response = r["response"];
    out.push({
      key: stringOf(r["key"]),
      response: isRecord(response) ? readResponseItem(response) : null,
      position: int64Of(meta["position"]),
      rendered: timestamps(meta["rendered"]),
      displayed: timestamps(meta["displayed"]),
      responded: timestamps(meta["responded"]),
    });
  }
  return out;
}

/** The node at a path from the root (`["rg", "scg", "1"]`); the first segment names the root. */
export function itemAtPath(response: ItemResponse | undefined, path: readonly string[]): ResponseItem | null {
  const root = response?.response;
  if (root === null || root === undefined || path[0] !== root.key) return null;
  let node: ResponseItem = root;
  for (let p = 1; p < path.length; p++) {
    const key = path[p];
    let found: ResponseItem | null = null;
    for (const child of node.items) {
      if (child.key === key) {
        found = child;
        break;
      }
    }
    if (found === null) return null;
    node = found;
  }
  return node;
}

/** The first node keyed `key`: the root, then its children, then depth first below each child. */
export function itemByShortKey(response: ItemResponse | undefined, key: string): ResponseItem | null {
  const root = response?.response;
  if (root === null || root === undefined) return null;
  return searchShortKey(root, key);
}

function searchShortKey(node: ResponseItem, key: string): ResponseItem | null {
  if (node.key === key) return node;
  for (const child of node.items) if (child.key === key) return child;
  for (const child of node.items) {
    const found = searchShortKey(child, key);
    if (found !== null) return found;
  }
  return null;
}

/** Go's `json.Marshal` of a ResponseItem (value, dtype and items left out when empty). */
export function responseItemJson(item: ResponseItem): string {
  let out = '{"key":' + goJsonString(item.key);
  if (item.value !== "") out += ',"value":' + goJsonString(item.value);
  if (item.dtype !== "") out += ',"dtype":' + goJsonString(item.dtype);
  if (item.items.length > 0) {
    out += ',"items":[';
    for (let i = 0; i < item.items.length; i++) out += (i === 0 ? "" : ",") + responseItemJson(item.items[i]!);
    out += "]";
  }
  return out + "}";
}

/** Whether every key in the tree below the root is one the question's definition knows. */
export function keysKnown(node: ResponseItem, known: ReadonlySet<string>): boolean {
  if (!known.has(node.key)) return false;
  for (const child of node.items) if (!keysKnown(child, known)) return false;
  return true;
}
