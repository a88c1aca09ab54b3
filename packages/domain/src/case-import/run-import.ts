import { stat } from "node:fs/promises";
import { setImmediate } from "node:timers/promises";
import { eq } from "drizzle-orm";
import { caseImportCheckpoints, type Database, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { Invalid } from "../errors";
import type { FileStore } from "../files/file-store";
import { deserializeCaseDocument, documentId, type CaseDocument } from "./case-values";
import {
  DumpFileDamaged,
  findDumpCollection,
  readDumpDocuments,
  type DumpCollectionFile,
  type ReadProgress,
} from "./dump-reader";
import { absentReason } from "./import-absent";
import {
  DOCUMENTS_PER_TURN,
  type AbsentRows,
  skipped,
  type BatchDocument,
  type CollectionImporter,
  type DocumentOutcome,
  type PreparedBatch,
} from "./import-batch";
import {
  ImportedStudies,
  participantsImporter,
  RuleVersionPlan,
  studyInfosImporter,
  studyRulesImporter,
  surveysImporter,
} from "./import-studies";
import { sharedStudyDataImporters, studyDataImporters } from "./import-study-data";
import { usersImporter } from "./import-users";
import { participantFilesImporter } from "./import-participant-files";
import { researcherMessagesImporter } from "./import-researcher-messages";
import { userAttributesImporter } from "./import-user-attributes";
import { importManagementCollections } from "./import-management";
import { importMessageCollections } from "./import-messages";

/** What `import:case` can take so far, in the order it takes them. */
export const CASE_IMPORT_PARTS = ["studies", "users", "management", "messages"] as const;
export type CaseImportPart = (typeof CASE_IMPORT_PARTS)[number];

/** Documents per transaction: large enough to keep round trips few, small enough to lose little on a kill. */
export const CASE_IMPORT_BATCH_SIZE = 1000;
/**
 * Dump bytes per transaction at most: a batch of large documents (responses of a few KB) ends here
 * before it reaches CASE_IMPORT_BATCH_SIZE, so a transaction stays around a megabyte whatever the
 * documents' size, and small documents (reports, codes) go in batches of many.
 */
export const CASE_IMPORT_BATCH_BYTES = 1024 * 1024;

export interface CaseImportOptions {
  /** The mongodump output directory (the folder holding one folder per database). */
  dumpDir: string;
  /** case-backend's instance id (INSTANCE_IDS), part of its database names. */
  instance: string;
  /** case-backend's DB_PREFIX, in front of the instance id in its database names. */
  dbPrefix: string;
  only: readonly CaseImportPart[];
  /** One study's collections only (the instance's accounts are not a study's: `--only` decides on them). */
  study?: string;
  dryRun: boolean;
  /** Overwrite studies and accounts studyflow has of its own (same key, same address). */
  replace: boolean;
  /**
   * Remove what earlier imports brought in and this dump no longer has (accounts, researchers,
   * grants, keys, templates, schedules, waiting e-mails; see import-absent). Without it each is
   * reported. Only after a whole pass over the collection's file, every document read.
   */
  prune?: boolean;
  batchSize?: number;
  /** case-backend's participant file folder: the files' bytes come from here; without it, metadata only. */
  filesDir?: string;
  /** The deployment's file store: where the files' bytes go (needed with filesDir), and where --prune removes a deleted file's. */
  fileStore?: FileStore;
}

/** A document that was not imported, and why. */
export interface CaseImportProblem {
  database: string;
  collection: string;
  /** The document's _id (hex for an ObjectId); empty when the problem is the collection's. */
  id: string;
  reason: string;
}

export interface CollectionSummary {
  database: string;
  collection: string;
  /** Documents read (without those a resumed run passed over). */
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: number;
  /** Not asked for: another study than `--study`. */
  ignored: number;
  /** Documents committed by an earlier, interrupted run and not read again. */
  resumedAfter: number;
  /** Rows an earlier import brought in that this dump no longer has: removed with --prune (or would be, in a dry run). */
  removed: number;
}

export interface CaseImportSummary {
  dryRun: boolean;
  collections: CollectionSummary[];
  /** inserted + updated + removed over all collections: 0 means the run changed nothing. */
  changed: number;
  skipped: number;
  /** Lines of the report: skipped documents, damaged files, a `--study` the dump lacks. */
  problems: number;
}

/** What the caller is told while the import runs: the CLI's progress bars and report file. */
export interface CaseImportListener {
  collectionStarted?: (file: DumpCollectionFile) => void;
  /** After each batch: compressed bytes for a gzip file. */
  progress?: (file: DumpCollectionFile, fileBytesRead: number, summary: CollectionSummary) => void;
  collectionFinished?: (file: DumpCollectionFile, summary: CollectionSummary) => void;
  problem?: (problem: CaseImportProblem) => void | Promise<void>;
}

export const caseDatabaseName = (options: Pick<CaseImportOptions, "dbPrefix" | "instance">, kind: string) =>
  `${options.dbPrefix}${options.instance}_${kind}`;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A batch ready for its transaction: the documents its importer reads, and how their outcomes rejoin the batch. */
interface PreparedRun {
  readable: readonly BatchDocument[];
  merge: (outcomes: readonly DocumentOutcome[]) => DocumentOutcome[];
  work: PreparedBatch;
}

class CaseImportRun {
  readonly summaries: CollectionSummary[] = [];
  problems = 0;

  constructor(
    private readonly db: Database,
    private readonly options: CaseImportOptions,
    private readonly listener: CaseImportListener,
    private readonly ctx: ClockContext,
  ) {}

  async problem(problem: CaseImportProblem) {
    this.problems += 1;
    await this.listener.problem?.(problem);
  }

  /** Every document of one collection file through its importer, batch by batch, resuming at the checkpoint. */
  async importCollection(file: DumpCollectionFile, importer: CollectionImporter): Promise<CollectionSummary> {
    const summary: CollectionSummary = {
      database: file.database,
      collection: file.collection,
      read: 0,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      skipped: 0,
      ignored: 0,
      resumedAfter: 0,
      removed: 0,
    };
    const name = `${file.database}/${file.collection}`;
    const write = !this.options.dryRun;
    const [checkpoint] = await this.db
      .select()
      .from(caseImportCheckpoints)
      .where(eq(caseImportCheckpoints.collection, name));
    // a finished collection is read again and compared (so a rerun says what changed); an unfinished one resumes
    const resumeAt =
      checkpoint && checkpoint.completedAt === null && checkpoint.fileBytes === file.bytes
        ? checkpoint.documentsDone
        : 0;
    summary.resumedAfter = resumeAt;
    this.listener.collectionStarted?.(file);
    const progress: ReadProgress = { fileBytesRead: 0 };
    const batchSize = this.options.batchSize ?? CASE_IMPORT_BATCH_SIZE;
    let batch: BatchDocument[] = [];
    let batchBytes = 0;
    let done = resumeAt;

    // One batch's transaction runs while the next batch is read and prepared: PostgreSQL works
    // on one core while the import reads BSON on the other. Batches commit in order, one at a time.
    let inFlight: Promise<void> = Promise.resolve();
    const flush = async () => {
      if (batch.length === 0) return;
      const current = batch;
      batch = [];
      batchBytes = 0;
      const prepared = await this.prepareBatch(importer, current);
      await inFlight;
      done += current.length;
      const written = this.runBatch(importer, prepared, write, name, file.bytes, done).then(async (outcomes) => {
        for (const [i, outcome] of outcomes.entries()) {
          summary[outcome.kind] += 1;
          const reason = outcome.kind === "skipped" ? outcome.reason : outcome.note;
          if (reason !== undefined) {
            await this.problem({
              database: file.database,
              collection: file.collection,
              id: documentId(current[i]!.document),
              reason,
            });
          }
        }
        this.listener.progress?.(file, progress.fileBytesRead, summary);
      });
      // its failure is thrown where it is awaited (the next flush or the end), not left unhandled meanwhile
      written.catch(() => undefined);
      inFlight = written;
    };
    const flushAll = async () => {
      await flush();
      await inFlight;
    };

    // The source ids of the whole file's documents (also those a resumed run passes over), for
    // what earlier imports brought in and this dump no longer has; null once a document is unreadable.
    let seen: Set<string> | null = importer.absent ? new Set() : null;
    const see = (document: CaseDocument) => {
      const id = seen === null ? undefined : importer.absent!.sourceIdOf(document);
      if (id !== undefined) seen!.add(id);
    };
    try {
      for await (const { index, bytes } of readDumpDocuments(file, progress)) {
        if (index < resumeAt) {
          if (seen !== null) {
            try {
              see(deserializeCaseDocument(bytes, importer.rawFields));
            } catch {
              seen = null;
            }
          }
          continue;
        }
        summary.read += 1;
        if (summary.read % DOCUMENTS_PER_TURN === 0) await setImmediate();
        let document: CaseDocument;
        try {
          document = deserializeCaseDocument(bytes, importer.rawFields);
        } catch (error) {
          seen = null;
          // counted in the batch so the checkpoint still moves past it
          batch.push({ index, bytes, document: { _id: `#${index}`, unreadable: errorText(error) } });
          batchBytes += bytes.length;
          if (batch.length >= batchSize || batchBytes >= CASE_IMPORT_BATCH_BYTES) await flush();
          continue;
        }
        see(document);
        batch.push({ index, bytes, document });
        batchBytes += bytes.length;
        if (batch.length >= batchSize || batchBytes >= CASE_IMPORT_BATCH_BYTES) await flush();
      }
      await flushAll();
      if (write) await this.saveCheckpoint(this.db, name, file.bytes, done, true);
      if (importer.absent) await this.findAbsent(file, importer.absent, seen, summary);
    } catch (error) {
      if (!(error instanceof DumpFileDamaged)) throw error;
      await flushAll();
      summary.skipped += 1;
      await this.problem({ database: file.database, collection: file.collection, id: "", reason: error.message });
    }
    this.listener.collectionFinished?.(file, summary);
    this.summaries.push(summary);
    return summary;
  }

  /**
   * After a whole pass: the rows earlier imports brought in whose documents the file no longer
   * has, removed with --prune (each in its own transaction: a killed run finds the rest again) or
   * reported. Not looked for when a document could not be read: it may be one of them.
   */
  private async findAbsent(
    file: DumpCollectionFile,
    absent: AbsentRows,
    seen: ReadonlySet<string> | null,
    summary: CollectionSummary,
  ) {
    const where = { database: file.database, collection: file.collection };
    if (seen === null) {
      await this.problem({
        ...where,
        id: "",
        reason: `not checked for ${absent.noun}s earlier imports brought in and this dump no longer has: a document could not be read`,
      });
      return;
    }
    const gone = (await absent.imported(this.db)).filter((entry) => !seen.has(entry.sourceId));
    for (const entry of gone) {
      if (this.options.prune && absent.remove) {
        summary.removed += 1;
        if (!this.options.dryRun) await absent.remove(this.db, entry, this.ctx);
      } else {
        await this.problem({ ...where, id: entry.sourceId, reason: absentReason(absent, entry) });
      }
    }
  }

  /** The documents bson could not read, set apart, and the importer's own work on the others. */
  private async prepareBatch(importer: CollectionImporter, batch: readonly BatchDocument[]): Promise<PreparedRun> {
    const unreadable = (entry: BatchDocument) =>
      typeof entry.document["unreadable"] === "string" && typeof entry.document["_id"] === "string"
        ? skipped(`not a readable BSON document: ${entry.document["unreadable"]}`)
        : undefined;
    const readable = batch.filter((entry) => unreadable(entry) === undefined);
    const merge = (outcomes: readonly DocumentOutcome[]) => {
      let next = 0;
      return batch.map((entry) => unreadable(entry) ?? outcomes[next++]!);
    };
    let work: PreparedBatch;
    try {
      work = importer.prepareBatch
        ? await importer.prepareBatch(readable)
        : (tx, write) => importer.importBatch(tx, readable, write);
    } catch (error) {
      work = () => Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return { readable, merge, work };
  }

  /**
   * One batch in one transaction with its checkpoint. When the batch fails as a whole (a
   * constraint the importer did not foresee), each document is tried on its own, so one bad
   * document is reported and the others still come in.
   */
  private async runBatch(
    importer: CollectionImporter,
    { readable, merge, work }: PreparedRun,
    write: boolean,
    name: string,
    fileBytes: number,
    doneAfter: number,
  ): Promise<DocumentOutcome[]> {
    try {
      const outcomes = await this.db.transaction(async (tx) => {
        const result = await work(tx, write);
        if (write) await this.saveCheckpoint(tx, name, fileBytes, doneAfter, false);
        return result;
      });
      return merge(outcomes);
    } catch (batchError) {
      if (readable.length <= 1) {
        const reason = errorText(batchError);
        if (write) await this.saveCheckpoint(this.db, name, fileBytes, doneAfter, false);
        return merge(readable.map(() => skipped(reason)));
      }
      const outcomes: DocumentOutcome[] = [];
      for (const entry of readable) {
        try {
          outcomes.push(...(await this.db.transaction((tx) => importer.importBatch(tx, [entry], write))));
        } catch (error) {
          outcomes.push(skipped(errorText(error)));
        }
      }
      if (write) await this.saveCheckpoint(this.db, name, fileBytes, doneAfter, false);
      return merge(outcomes);
    }
  }

  private async saveCheckpoint(db: Executor, name: string, fileBytes: number, done: number, completed: boolean) {
    const now = new Date(this.ctx.clock());
    const values = { fileBytes, documentsDone: done, completedAt: completed ? now : null, updatedAt: now };
    await db
      .insert(caseImportCheckpoints)
      .values({ collection: name, ...values })
      .onConflictDoUpdate({ target: caseImportCheckpoints.collection, set: values });
  }
}

async function requireCollection(dumpDir: string, database: string, collection: string) {
  const file = await findDumpCollection(dumpDir, database, collection);
  if (!file) {
    throw new Invalid(`the dump has no ${database}/${collection}.bson(.gz) (is --instance or --db-prefix right?)`);
  }
  return file;
}

/**
 * Imports a case-backend instance's mongodump into studyflow: studies with their rules, survey
 * versions and participants, and the participant accounts. Idempotent (a rerun changes nothing and
 * counts everything unchanged), resumable (each collection goes on after its last committed
 * batch), and a document that cannot be imported is reported to the listener without stopping the
 * rest. A dry run reads and decides the same and writes nothing.
 *
 * @throws Invalid when the dump directory or a required collection is missing.
 */
export async function importCaseDump(
  db: Database,
  options: CaseImportOptions,
  listener: CaseImportListener,
  ctx: ClockContext,
): Promise<CaseImportSummary> {
  const info = await stat(options.dumpDir).catch(() => undefined);
  if (!info?.isDirectory()) throw new Invalid(`dump directory ${options.dumpDir} does not exist`);
  if (options.filesDir !== undefined) {
    const files = await stat(options.filesDir).catch(() => undefined);
    if (!files?.isDirectory()) throw new Invalid(`files directory ${options.filesDir} does not exist`);
    if (!options.fileStore) throw new Invalid("the files' bytes need the file store to go to");
  }
  const run = new CaseImportRun(db, options, listener, ctx);
  const studyDb = caseDatabaseName(options, "studyDB");
  const usersDb = caseDatabaseName(options, "users");
  const wanted = new Set(options.only);
  // find every required file before anything is written
  const studyInfos = wanted.has("studies")
    ? await requireCollection(options.dumpDir, studyDb, "study-infos")
    : undefined;
  const usersFile = wanted.has("users") ? await requireCollection(options.dumpDir, usersDb, "users") : undefined;

  if (studyInfos) {
    const imported = new ImportedStudies();
    await run.importCollection(studyInfos, studyInfosImporter(options.study, options.replace, imported, ctx));
    if (options.study !== undefined && !imported.keys.has(options.study) && !imported.refused.has(options.study)) {
      await run.problem({
        database: studyDb,
        collection: "study-infos",
        id: "",
        reason: `study "${options.study}" was not imported (not in the dump, or its document was skipped)`,
      });
    }
    const rulesFile = await findDumpCollection(options.dumpDir, studyDb, "studyRules");
    if (rulesFile) {
      const plan = new RuleVersionPlan();
      try {
        for await (const { bytes } of readDumpDocuments(rulesFile)) {
          try {
            plan.note(deserializeCaseDocument(bytes));
          } catch {
            // an unreadable document is reported by the import pass
          }
        }
      } catch (error) {
        // a damaged file is reported by the import pass, which stops at the same place
        if (!(error instanceof DumpFileDamaged)) throw error;
      }
      await run.importCollection(rulesFile, studyRulesImporter(imported, plan));
    }
    for (const studyKey of [...imported.keys].sort()) {
      for (const [suffix, importer] of [
        ["surveys", surveysImporter(studyKey)],
        ["participants", participantsImporter(studyKey)],
        ...studyDataImporters(studyKey),
        [
          "participantFiles",
          participantFilesImporter(studyKey, {
            ...(options.filesDir === undefined ? {} : { filesDir: options.filesDir }),
            ...(options.fileStore === undefined ? {} : { store: options.fileStore }),
          }),
        ],
        ["researcherMessages", researcherMessagesImporter(studyKey, options.replace, ctx)],
      ] as const) {
        const file = await findDumpCollection(options.dumpDir, studyDb, `${studyKey}_${suffix}`);
        if (file) await run.importCollection(file, importer);
      }
    }
    for (const [collection, importer] of sharedStudyDataImporters(imported)) {
      const file = await findDumpCollection(options.dumpDir, studyDb, collection);
      if (file) await run.importCollection(file, importer);
    }
  }
  if (usersFile) {
    await run.importCollection(usersFile, usersImporter(options.replace, ctx));
    const attributesFile = await findDumpCollection(options.dumpDir, usersDb, "userAttributes");
    if (attributesFile) await run.importCollection(attributesFile, userAttributesImporter(options.replace));
  }
  const importCollection = (file: DumpCollectionFile, importer: CollectionImporter) =>
    run.importCollection(file, importer);
  if (wanted.has("management")) {
    await importManagementCollections(options.dumpDir, usersDb, options.replace, ctx, importCollection);
  }
  if (wanted.has("messages")) {
    const messageDb = caseDatabaseName(options, "messageDB");
    await importMessageCollections(options.dumpDir, messageDb, options.replace, ctx, importCollection);
  }

  const sum = (field: keyof CollectionSummary) =>
    run.summaries.reduce((total, summary) => total + (summary[field] as number), 0);
  return {
    dryRun: options.dryRun,
    collections: run.summaries,
    changed: sum("inserted") + sum("updated") + sum("removed"),
    skipped: sum("skipped"),
    problems: run.problems,
  };
}
