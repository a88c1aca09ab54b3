import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import postgres from "postgres";
import { migrationsFolder } from "@studyflow/db";

/**
 * Applies the migrations up to (without) the one tagged `before`, from a copy of the folder whose
 * journal ends there: the database is left as the migration under test finds it.
 */
export async function migrateUpTo(url: string, before: string): Promise<void> {
  const folder = await mkdtemp(path.join(tmpdir(), "studyflow-migrations-"));
  try {
    await cp(migrationsFolder, folder, { recursive: true });
    const journalPath = path.join(folder, "meta", "_journal.json");
    const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: { tag: string }[] };
    const index = journal.entries.findIndex((entry) => entry.tag === before);
    if (index <= 0) throw new Error(`no migration before ${before} in the journal`);
    journal.entries = journal.entries.slice(0, index);
    await writeFile(journalPath, JSON.stringify(journal));
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const { migrate } = await import("drizzle-orm/postgres-js/migrator");
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
    } finally {
      await sql.end();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
