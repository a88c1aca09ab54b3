import type { ResponseItem, SurveyItemResponse, SurveyResponse } from "./types";

/** The first top-level item of the response with this key (no recursion into groups). */
export function findSurveyItem(response: SurveyResponse | undefined, itemKey: string): SurveyItemResponse | undefined {
  const items = response?.responses;
  if (!Array.isArray(items)) return undefined;
  for (const item of items) {
    if (item !== null && typeof item === "object" && item.key === itemKey) return item;
  }
  return undefined;
}

/**
 * The node at a dot-separated path: the first segment must be the item's root response key, each
 * further segment descends into `items` by key.
 */
export function findResponseNode(item: SurveyItemResponse | undefined, path: string): ResponseItem | undefined {
  let node = item?.response;
  if (node === null || typeof node !== "object") return undefined;
  const segments = path.split(".");
  if (node.key !== segments[0]) return undefined;
  for (let i = 1; i < segments.length; i++) {
    const children: unknown = node.items;
    if (!Array.isArray(children)) return undefined;
    const next = (children as unknown[]).find(
      (child): child is ResponseItem =>
        child !== null && typeof child === "object" && (child as ResponseItem).key === segments[i],
    );
    if (!next) return undefined;
    node = next;
  }
  return node;
}

/** The node at `path` inside item `itemKey` of the event's response. */
export function findResponseValueNode(
  response: SurveyResponse | undefined,
  itemKey: string,
  path: string,
): ResponseItem | undefined {
  return findResponseNode(findSurveyItem(response, itemKey), path);
}

/** Keys of a node's direct children. */
export function childKeys(node: ResponseItem): string[] {
  const children: unknown = node.items;
  if (!Array.isArray(children)) return [];
  const keys: string[] = [];
  for (const child of children as unknown[]) {
    if (child !== null && typeof child === "object") {
      const key = (child as ResponseItem).key;
      keys.push(typeof key === "string" ? key : "");
    }
  }
  return keys;
}
