import { bigint, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * What `import:case` took from a CASE deployment, one row per source document it maps to a
 * studyflow row of its own (a study, an account): the document's content hash, so a second run
 * sees what is unchanged, and the studyflow key it went to. An account's CASE id (a Mongo
 * ObjectId) fits no UUID column, so this is also where a CASE account id finds its user. Parts of
 * a document studyflow has no column for yet are kept in `kept`, for a later step to take.
 */
export const caseImportRecords = pgTable(
  "case_import_records",
  {
    /** "study", "user". */
    kind: text("kind").notNull(),
    /** The CASE id: a study key, an account's ObjectId in hex. */
    sourceId: text("source_id").notNull(),
    /** The studyflow row: a study key, a users.id. */
    targetId: text("target_id").notNull(),
    /** SHA-256 of the document's canonical JSON. */
    contentHash: text("content_hash").notNull(),
    kept: jsonb("kept").$type<Record<string, unknown>>().notNull().default({}),
    importedAt: timestamp("imported_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.sourceId] })],
);

/**
 * How far `import:case` came through each collection of a dump: the documents done, in the
 * dump file's order, so a killed run resumes after the last committed batch. A dump file of
 * another size is another dump: the collection is read again from its start.
 */
export const caseImportCheckpoints = pgTable("case_import_checkpoints", {
  /** `<database>/<collection>`, as the dump directory names them. */
  collection: text("collection").primaryKey(),
  fileBytes: bigint("file_bytes", { mode: "number" }).notNull(),
  documentsDone: bigint("documents_done", { mode: "number" }).notNull(),
  completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
});
