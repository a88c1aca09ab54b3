import { Invalid } from "../errors";
import { CASE_FIELDS, type CaseFilterTarget } from "./fields";

export interface CaseSortKey {
  /** The CASE field name, as given. */
  field: string;
  /** The column of the target's table. */
  column: string;
  direction: "asc" | "desc";
}

/** Sort keys one request may give; CASE documents have few sortable fields anyway. */
const MAX_SORT_KEYS = 4;

/**
 * case-admin's `sort` (`{"enteredAt": -1}`) as columns of the target's table, in the order given
 * (case-backend passes a Go map, whose order is random; the order of the JSON is what the caller
 * meant). Only fields with a column of their own sort; 1 is ascending, -1 descending.
 */
export function translateCaseSort(target: CaseFilterTarget, sort: unknown): CaseSortKey[] {
  if (sort === undefined || sort === null) return [];
  if (typeof sort !== "object" || Array.isArray(sort)) throw new Invalid('sort: expected an object like {"field": 1}');
  const entries = Object.entries(sort as Record<string, unknown>);
  if (entries.length > MAX_SORT_KEYS) throw new Invalid(`sort: at most ${MAX_SORT_KEYS} fields`);
  const fields = CASE_FIELDS[target];
  const sortable = Object.entries(fields)
    .filter(([, field]) => field.shape === "scalar" && field.column !== null)
    .map(([name]) => name);
  return entries.map(([name, direction]) => {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!field || field.shape !== "scalar" || field.column === null) {
      throw new Invalid(`sort: cannot sort on "${name}" (${target} sort on ${sortable.join(", ")})`);
    }
    if (direction !== 1 && direction !== -1) throw new Invalid(`sort.${name}: expected 1 or -1`);
    return { field: name, column: field.column, direction: direction === 1 ? "asc" : "desc" };
  });
}
