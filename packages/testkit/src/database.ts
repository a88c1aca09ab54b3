import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createDb, type DbHandle } from "@studyflow/db";
import { adminClient, databaseUrlFor, quoteIdent } from "./env";

export interface TestDatabase extends DbHandle {
  name: string;
  url: string;
  /** Closes the pool and drops the database. */
  drop: () => Promise<void>;
}

/** A fresh, migrated database of this test run, cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const runId = inject("studyflowRunId");
  const template = inject("studyflowTemplate");
  const name = `sf_t_${runId}_${randomBytes(4).toString("hex")}`;
  const admin = adminClient();
  try {
    await admin.unsafe(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrlFor(name);
  const handle = createDb(url, { max: 10, applicationName: "studyflow-test" });
  return {
    ...handle,
    name,
    url,
    drop: async () => {
      await handle.close(1);
      const sql = adminClient();
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** An empty database of this run, not migrated (for migration tests). */
export async function createEmptyDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `sf_e_${inject("studyflowRunId")}_${randomBytes(4).toString("hex")}`;
  const admin = adminClient();
  try {
    await admin.unsafe(`CREATE DATABASE ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrlFor(name),
    drop: async () => {
      const sql = adminClient();
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}
