import { and, asc, count, eq, gt, sql } from "drizzle-orm";
import { studyCodeLists, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudy } from "../studies/study-repository";
import { decodePageCursor, encodePageCursor, type Page } from "./page-cursor";

/**
 * A study's code lists: codes that rules draw (DRAW_STUDY_CODE_AS_LINKING_CODE), check
 * (isStudyCodePresent) and remove. A list exists while it holds codes; an unknown list is empty.
 */

/** Longest code: kit and invitation codes are short; this only stops a pasted document. */
export const MAX_CODE_LENGTH = 256;
/** Most codes one API request adds (the CLI sends a whole file, in statements of this size). */
export const MAX_CODES_PER_ADD = 10_000;
/** Codes per INSERT statement: one JSON parameter each, so bounded by memory, not by parameter count. */
const INSERT_BATCH = 10_000;

/** Why a code cannot be stored, or null: non-empty, trimmed, at most MAX_CODE_LENGTH, no control characters. */
export function codeProblem(code: string): string | null {
  if (code.trim() === "") return "must not be empty";
  if (code !== code.trim()) return "must not start or end with spaces";
  if (code.length > MAX_CODE_LENGTH) return `is longer than ${MAX_CODE_LENGTH} characters`;
  // one code per line in files, and codes are typed by people: no line breaks, tabs or other controls
  if (/\p{Cc}/u.test(code)) return "must not contain control characters (line breaks, tabs)";
  return null;
}

export interface AddedCodes {
  added: number;
  /** Codes already in the list, or given more than once: not added again, in the order given. */
  skipped: string[];
}

export interface StoredCode {
  code: string;
  addedAt: Date;
}

export interface CodeListSummary {
  listKey: string;
  codeCount: number;
}

/**
 * Adds codes to a list in the order given (rules draw them in that order), skipping codes the
 * list already holds, and records `code-list.add` with the counts (not the codes) in the same
 * transaction.
 */
export async function addStudyCodes(
  db: Executor,
  studyKey: string,
  listKey: string,
  codes: readonly string[],
  actor: string,
): Promise<AddedCodes> {
  if (codes.length === 0) throw new Invalid("codes: give at least one code");
  codes.forEach((code, i) => {
    const problem = codeProblem(code);
    if (problem) throw new Invalid(`codes[${i}]: ${problem}`);
  });
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const inserted = new Set<string>();
    for (let start = 0; start < codes.length; start += INSERT_BATCH) {
      const batch = JSON.stringify(codes.slice(start, start + INSERT_BATCH));
      // DO NOTHING also skips a code repeated within the batch; ids follow the given order.
      const rows = await tx.execute<{ code: string }>(sql`
        insert into ${studyCodeLists} (study_key, list_key, code)
        select ${studyKey}, ${listKey}, given.code
        from jsonb_array_elements_text(${batch}::text::jsonb) with ordinality as given(code, position)
        order by given.position
        on conflict (study_key, list_key, code) do nothing
        returning code`);
      for (const row of rows) inserted.add(row.code);
    }
    const skipped: string[] = [];
    for (const code of codes) {
      // the first occurrence of an inserted code was the one added; any other is skipped
      if (!inserted.delete(code)) skipped.push(code);
    }
    const added = codes.length - skipped.length;
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "code-list.add",
      target: listKey,
      details: { added, skipped: skipped.length },
    });
    return { added, skipped };
  });
}

/** The study's lists that hold codes, by key, with their sizes. */
export async function listStudyCodeLists(db: Executor, studyKey: string): Promise<CodeListSummary[]> {
  await getStudy(db, studyKey);
  return db
    .select({ listKey: studyCodeLists.listKey, codeCount: count() })
    .from(studyCodeLists)
    .where(eq(studyCodeLists.studyKey, studyKey))
    .groupBy(studyCodeLists.listKey)
    .orderBy(asc(studyCodeLists.listKey));
}

/** One page of a list's codes in code order (keyset over the list's unique index). */
export async function listStudyCodes(
  db: Executor,
  studyKey: string,
  listKey: string,
  page: { limit: number; cursor?: string },
): Promise<Page<StoredCode>> {
  await getStudy(db, studyKey);
  const after = page.cursor === undefined ? undefined : String(decodePageCursor(page.cursor, ["string"])[0]);
  const rows = await db
    .select({ code: studyCodeLists.code, addedAt: studyCodeLists.addedAt })
    .from(studyCodeLists)
    .where(
      and(
        eq(studyCodeLists.studyKey, studyKey),
        eq(studyCodeLists.listKey, listKey),
        after === undefined ? undefined : gt(studyCodeLists.code, after),
      ),
    )
    .orderBy(asc(studyCodeLists.code))
    // one more than the page: whether it exists says if there is a next page
    .limit(page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > page.limit && last ? encodePageCursor([last.code]) : null };
}

export async function countStudyCodes(db: Executor, studyKey: string, listKey: string): Promise<number> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select({ codeCount: count() })
    .from(studyCodeLists)
    .where(and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey)));
  return row?.codeCount ?? 0;
}

/** Whether a study's list holds a code (CASE's public has-code check); NotFound for an unknown study. */
export async function studyCodeExists(db: Executor, studyKey: string, listKey: string, code: string): Promise<boolean> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select({ id: studyCodeLists.id })
    .from(studyCodeLists)
    .where(
      and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey), eq(studyCodeLists.code, code)),
    )
    .limit(1);
  return row !== undefined;
}

/** Removes one code, recording `code-list.remove` with the code; NotFound if the list does not hold it. */
export async function removeStudyCode(
  db: Executor,
  studyKey: string,
  listKey: string,
  code: string,
  actor: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const removed = await tx
      .delete(studyCodeLists)
      .where(
        and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey), eq(studyCodeLists.code, code)),
      )
      .returning({ id: studyCodeLists.id });
    if (removed.length === 0) {
      throw new NotFound(`code "${code}" is not in code list "${listKey}" of study "${studyKey}"`);
    }
    await recordAudit(tx, { studyKey, actor, action: "code-list.remove", target: listKey, details: { code } });
  });
}

/** The keys of the study's lists that hold codes, in key order. */
export async function listStudyCodeListKeys(db: Executor, studyKey: string): Promise<string[]> {
  return (await listStudyCodeLists(db, studyKey)).map((list) => list.listKey);
}

export interface StoredCodeEntry extends StoredCode {
  /** The row's id: codes of a list in the order they were added. */
  id: number;
}

/** A slice of a list's codes in the order they were added (the order rules draw them in). */
export async function listStudyCodeEntries(
  db: Executor,
  studyKey: string,
  listKey: string,
  slice: { offset: number; limit: number },
): Promise<StoredCodeEntry[]> {
  await getStudy(db, studyKey);
  return db
    .select({ id: studyCodeLists.id, code: studyCodeLists.code, addedAt: studyCodeLists.addedAt })
    .from(studyCodeLists)
    .where(and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey)))
    .orderBy(asc(studyCodeLists.id))
    .offset(slice.offset)
    .limit(slice.limit);
}

/**
 * Adds codes as case-backend does: each code trimmed, and every code that cannot be added named
 * in the answer (`errors`, one message per code) instead of refusing the whole request. The codes
 * that can be added are added in one transaction with one `code-list.add` audit entry.
 */
export async function addStudyCodesReportingErrors(
  db: Executor,
  studyKey: string,
  listKey: string,
  given: readonly string[],
  actor: string,
): Promise<string[]> {
  const errors: string[] = [];
  const codes: string[] = [];
  for (const raw of given) {
    const code = raw.trim();
    const problem = code === "" ? "empty code cannot be added" : codeProblem(code);
    if (problem === "empty code cannot be added") errors.push(problem);
    else if (problem) errors.push(`code '${code}' cannot be added: it ${problem}`);
    else codes.push(code);
  }
  if (codes.length === 0) {
    await getStudy(db, studyKey);
    return errors;
  }
  const { skipped } = await addStudyCodes(db, studyKey, listKey, codes, actor);
  for (const code of skipped) errors.push(`code '${code}' is already in list '${listKey}'`);
  return errors;
}

/** Removes a whole list, recording `code-list.delete` with the number of codes; NotFound if it holds none. */
export async function removeStudyCodeList(
  db: Executor,
  studyKey: string,
  listKey: string,
  actor: string,
): Promise<number> {
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const removed = await tx
      .delete(studyCodeLists)
      .where(and(eq(studyCodeLists.studyKey, studyKey), eq(studyCodeLists.listKey, listKey)))
      .returning({ id: studyCodeLists.id });
    if (removed.length === 0) throw new NotFound(`code list "${listKey}" of study "${studyKey}" holds no codes`);
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "code-list.delete",
      target: listKey,
      details: { removed: removed.length },
    });
    return removed.length;
  });
}
