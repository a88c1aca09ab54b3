import { desc, eq, sql } from "drizzle-orm";
import { compileRules, type CompiledRuleSet } from "@studyflow/engine";
import { studyRules, type Executor } from "@studyflow/db";
import { recordAudit } from "../admin/audit";
import type { ReadCache } from "../cache/read-cache";

export interface CurrentRules {
  version: number;
  compiled: CompiledRuleSet;
}

/**
 * Compiled rule sets by study and version. A version is immutable once stored, so an entry
 * never goes stale; only the lookup of the current version number hits the database per event.
 */
const compiledCache = new Map<string, CompiledRuleSet>();
/** Bounds memory when a process serves many studies: oldest entries go first. */
const CACHE_LIMIT = 256;

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
    .select({ version: sql<number | null>`max(${studyRules.version})` })
    .from(studyRules)
    .where(eq(studyRules.studyKey, studyKey));
  const version = latest?.version;
  if (version === null || version === undefined) return null;
  const cacheKey = `${studyKey}\u0000${version}`;
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
 * Stores a validated rule set as the study's next version and records it in the audit log
 * (`rules.set` by the uploader), in the caller's transaction.
 */
export async function storeRules(
  db: Executor,
  studyKey: string,
  rules: unknown[],
  uploadedBy: string,
): Promise<number> {
  const [latest] = await db
    .select({ version: studyRules.version })
    .from(studyRules)
    .where(eq(studyRules.studyKey, studyKey))
    .orderBy(desc(studyRules.version))
    .limit(1);
  const version = (latest?.version ?? 0) + 1;
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
