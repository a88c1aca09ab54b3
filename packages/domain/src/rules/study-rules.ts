import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { compileRules, type CompiledRuleSet } from "@studyflow/engine";
import { auditLog, studyRules, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import type { ReadCache } from "../cache/read-cache";

export interface CurrentRules {
  version: number;
  compiled: CompiledRuleSet;
}

/**
 * Compiled rule sets by stored row: study, version and the id of the transaction that stored it
 * (`xmin`, unique across the PostgreSQL cluster). A stored version is never changed, so an entry
 * never goes stale; only the lookup of the current version hits the database per event. The
 * transaction id keeps apart rows that share a study key and version but are not the same rules:
 * a database restored from a dump or imported afresh while the process runs, or two databases
 * served by one process (the test suite's files, which share worker processes).
 */
const compiledCache = new Map<string, CompiledRuleSet>();
/** Bounds memory when a process serves many studies: oldest entries go first. */
const CACHE_LIMIT = 256;

/** The transaction that stored a study_rules row (see compiledCache). */
export const storedRowId = sql<string>`${studyRules}.xmin::text`;

/** Names one stored rules row for the caches of compiled or inspected rules (see compiledCache). */
export function storedRulesKey(studyKey: string, version: number, storedRowId: string): string {
  return `${studyKey}\u0000${version}\u0000${storedRowId}`;
}

function remember(key: string, compiled: CompiledRuleSet) {
  if (compiledCache.size >= CACHE_LIMIT) {
    const oldest = compiledCache.keys().next().value;
    if (oldest !== undefined) compiledCache.delete(oldest);
  }
  compiledCache.set(key, compiled);
}

/**
 * The study's current (highest-version) rules, or null when the study has none. With a read
 * cache, the answer (null too) is kept until a new version is announced.
 */
export async function loadCurrentRules(
  db: Executor,
  studyKey: string,
  cache?: ReadCache,
): Promise<CurrentRules | null> {
  if (!cache) return loadStoredRules(db, studyKey);
  const kept = await cache.get("rules", studyKey, async () => ({ current: await loadStoredRules(db, studyKey) }));
  return kept?.current ?? null;
}

async function loadStoredRules(db: Executor, studyKey: string): Promise<CurrentRules | null> {
  const [latest] = await db
    .select({ version: studyRules.version, stored: storedRowId })
    .from(studyRules)
    .where(eq(studyRules.studyKey, studyKey))
    .orderBy(desc(studyRules.version))
    .limit(1);
  if (!latest) return null;
  const { version } = latest;
  const cacheKey = storedRulesKey(studyKey, version, latest.stored);
  const cached = compiledCache.get(cacheKey);
  if (cached) return { version, compiled: cached };
  const [stored] = await db
    .select({ rules: studyRules.rules })
    .from(studyRules)
    .where(sql`${studyRules.studyKey} = ${studyKey} and ${studyRules.version} = ${version}`)
    .limit(1);
  if (!stored) return null;
  // Stored rules were validated at upload; compiling validates again, cheaply, once per version.
  const compiled = compileRules(stored.rules);
  remember(cacheKey, compiled);
  return { version, compiled };
}

/**
 * The number the study's next rules version gets: one past every version its key ever had. A
 * deleted version's number is never given again, so a version number names one rule set for good
 * (timer tasks, rule failures and the audit trail refer to versions by number): the highest stored
 * version counts, and so does every version the audit log (never pruned, it outlives what it
 * describes) saw stored (`rules.set`) or deleted (`rules.delete`), a version that went with a
 * deleted study of the same key included.
 */
async function nextRulesVersion(db: Executor, studyKey: string): Promise<number> {
  const [stored] = await db
    .select({ version: sql<number | null>`max(${studyRules.version})` })
    .from(studyRules)
    .where(eq(studyRules.studyKey, studyKey));
  const [audited] = await db
    .select({ version: sql<number | null>`max((${auditLog.details} ->> 'version')::int)` })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.studyKey, studyKey),
        inArray(auditLog.action, ["rules.set", "rules.delete"]),
        sql`jsonb_typeof(${auditLog.details} -> 'version') = 'number'`,
      ),
    );
  return Math.max(stored?.version ?? 0, audited?.version ?? 0) + 1;
}

/**
 * Stores a validated rule set as the study's next version (see nextRulesVersion) and records it in
 * the audit log (`rules.set` by the uploader), in the caller's transaction, which serialises
 * uploads and deletions of the study (the study-rules advisory lock).
 */
export async function storeRules(
  db: Executor,
  studyKey: string,
  rules: unknown[],
  uploadedBy: string,
): Promise<number> {
  const version = await nextRulesVersion(db, studyKey);
  await db.insert(studyRules).values({ studyKey, version, rules, uploadedBy });
  await recordAudit(db, {
    studyKey,
    actor: uploadedBy,
    action: "rules.set",
    target: String(version),
    details: { version, ruleCount: rules.length },
  });
  return version;
}
