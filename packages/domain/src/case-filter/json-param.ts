import { Invalid } from "../errors";

/** Longest `filter`/`sort` query value accepted; a filter of a few hundred conditions fits. */
export const MAX_JSON_PARAM_LENGTH = 16_000;

/**
 * A JSON query parameter (`?filter=…`, `?sort=…`) as case-admin sends it: URL-encoded JSON, which
 * case-backend decodes once more (so an encoded-twice value works too). Absent or empty → undefined.
 */
export function parseCaseJsonParam(name: string, raw: string | undefined): unknown {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > MAX_JSON_PARAM_LENGTH) throw new Invalid(`${name}: longer than ${MAX_JSON_PARAM_LENGTH} characters`);
  let text = raw;
  if (/%[0-9a-fA-F]{2}/.test(raw)) {
    try {
      text = decodeURIComponent(raw);
    } catch {
      throw new Invalid(`${name}: not valid percent-encoded text`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Invalid(`${name}: not valid JSON`);
  }
}
