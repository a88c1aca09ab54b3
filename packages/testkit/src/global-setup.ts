import { randomBytes } from "node:crypto";
import type { TestProject } from "vitest/node";
import { runMigrations } from "@studyflow/db";
import { adminClient, databaseUrlFor, quoteIdent } from "./env";

/**
 * Runs once per `vitest run`: migrates a template database that every test file clones
 * (CREATE DATABASE … TEMPLATE is far faster than migrating per file), and drops everything
 * this run created when it ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Only a name unique to this run (its databases), never a time anything is compared with.
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const template = `sf_tpl_${runId}`;
  const admin = adminClient();
  try {
    await admin.unsafe(`CREATE DATABASE ${quoteIdent(template)}`);
  } finally {
    await admin.end();
  }
  await runMigrations(databaseUrlFor(template));
  project.provide("studyflowRunId", runId);
  project.provide("studyflowTemplate", template);

  return async () => {
    const sql = adminClient();
    try {
      const rows = await sql<{ datname: string }[]>`
        select datname from pg_database where datname like ${`sf_%${runId}%`}`;
      for (const { datname } of rows) {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
      }
    } finally {
      await sql.end();
    }
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    studyflowRunId: string;
    studyflowTemplate: string;
  }
}
