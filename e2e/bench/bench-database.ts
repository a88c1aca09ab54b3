import { randomBytes } from "node:crypto";
import { adminClient, databaseUrlFor, quoteIdent } from "@studyflow/testkit";

/** A database of a benchmark's own on the DATABASE_URL server, dropped (forcibly) when done. */
export async function createBenchDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const asAdmin = async (statement: string) => {
    const admin = adminClient();
    try {
      await admin.unsafe(statement);
    } finally {
      await admin.end();
    }
  };
  await asAdmin(`create database ${quoteIdent(name)}`);
  return { url: databaseUrlFor(name), drop: () => asAdmin(`drop database if exists ${quoteIdent(name)} with (force)`) };
}
