/**
 * Survey definitions in the shape case-editor-tools writes them, and responses in the shape the
 * survey engine submits them, for the tests of this package.
 */

export type Json = Record<string, unknown>;

/** Localised content: `{ en: "Fever", de: "Fieber" }` → CASE's `[{code, parts:[{str, dtype}]}]`. */
export function content(texts: Record<string, string>): Json[] {
  return Object.entries(texts).map(([code, str]) => ({ code, parts: [{ str, dtype: "str" }] }));
}

export function comp(role: string, key: string, texts?: Record<string, string>, items?: Json[]): Json {
  const c: Json = { role, key };
  if (texts !== undefined) c["content"] = content(texts);
  if (items !== undefined) c["items"] = items;
  return c;
}

export const option = (key: string, en: string, de?: string): Json =>
  comp("option", key, de === undefined ? { en } : { en, de });

/** A question item: a title and one response group holding `responseComponents`. */
export function question(key: string, title: Record<string, string>, responseComponents: Json[]): Json {
  return {
    key,
    components: {
      role: "root",
      items: [
        { role: "title", content: content(title) },
        { key: "rg", role: "responseGroup", items: responseComponents },
      ],
    },
    validations: [],
  };
}

/** A display item: markdown text, no response group. */
export function display(key: string, markdown: string): Json {
  return {
    key,
    components: { role: "root", items: [{ key: "md", role: "markdown", content: content({ en: markdown }) }] },
  };
}

export function group(key: string, items: Json[]): Json {
  return { key, items };
}

export function upload(surveyKey: string, items: Json[]): Json {
  return {
    props: { name: content({ en: surveyKey }) },
    surveyDefinition: { key: surveyKey, items },
  };
}

// ----- responses ---------------------------------------------------------------------------------

export interface Meta {
  position?: number;
  rendered?: number[];
  displayed?: number[];
  responded?: number[];
}

export interface RItem {
  key: string;
  value?: string;
  dtype?: string;
  items?: RItem[];
}

export const r = (key: string, items?: RItem[]): RItem => (items === undefined ? { key } : { key, items });
export const v = (key: string, value: string, dtype?: string): RItem =>
  dtype === undefined ? { key, value } : { key, value, dtype };

/** One item's response: `rg` holding `items`. */
export function answer(key: string, items: RItem[] | null, meta: Meta = {}): Json {
  const out: Json = {
    key,
    meta: {
      position: meta.position ?? 0,
      localeCode: "en",
      rendered: meta.rendered ?? [1700000000],
      displayed: meta.displayed ?? [1700000001],
      responded: meta.responded ?? [],
    },
  };
  if (items !== null) out["response"] = { key: "rg", items };
  return out;
}
