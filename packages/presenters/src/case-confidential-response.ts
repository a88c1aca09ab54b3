import { z } from "@hono/zod-openapi";

/**
 * Confidential responses as CASE's confidential export lists them: one entry per answer slot,
 * `<itemKey>-<slot path>` as responseKey (the slot path's keys joined by "."), the slot's value,
 * the stored entry's id, and the participant id the researcher asked for.
 */
export const caseConfidentialEntrySchema = z
  .object({
    participantID: z.string(),
    entryID: z.string().openapi({ description: "the stored confidential response" }),
    responseKey: z.string().openapi({ example: "intake.Q5-rg.name" }),
    value: z.string(),
  })
  .openapi("CaseConfidentialResponseEntry");

export type CaseConfidentialEntry = z.infer<typeof caseConfidentialEntrySchema>;

interface ResponseItem {
  key?: unknown;
  value?: unknown;
  items?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The leaves of a response item tree: slot key → value, keys joined with "." below the item's "-". */
function slots(item: ResponseItem, prefix: string, into: [string, string][]): void {
  const key = prefix.endsWith("-") ? prefix + text(item.key) : `${prefix}.${text(item.key)}`;
  const children = Array.isArray(item.items) ? item.items.filter(isObject) : [];
  if (children.length === 0) {
    into.push([key, text(item.value)]);
    return;
  }
  for (const child of children) slots(child, key, into);
}

/**
 * One stored confidential response as CASE's export entries. A slot that occurs twice in one
 * response keeps its last value, as CASE's map does; entries come in the order of the items.
 */
export function presentCaseConfidentialEntries(record: {
  id: string;
  participantId: string;
  responses: readonly unknown[];
}): CaseConfidentialEntry[] {
  const found: [string, string][] = [];
  for (const itemResponse of record.responses) {
    if (!isObject(itemResponse) || !isObject(itemResponse["response"])) continue;
    slots(itemResponse["response"], `${text(itemResponse["key"])}-`, found);
  }
  const bySlot = new Map(found);
  return [...bySlot].map(([responseKey, value]) => ({
    participantID: record.participantId,
    entryID: record.id,
    responseKey,
    value,
  }));
}
