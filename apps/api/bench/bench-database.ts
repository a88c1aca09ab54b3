import { randomBytes } from "node:crypto";
import { adminClient, databaseUrlFor, quoteIdent } from "@studyflow/testkit";

async function asAdmin(statement: string) {
  const admin = adminClient();
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

/** A fresh, empty database for one bench run (`sf_bench_<label>_<random>`), and how to drop it. */
export async function createBenchDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sf_bench_${label}_${randomBytes(4).toString("hex")}`;
  await asAdmin(`create database ${quoteIdent(name)}`);
  return {
    url: databaseUrlFor(name),
    drop: () => asAdmin(`drop database if exists ${quoteIdent(name)} with (force)`),
  };
}
