import { createWriteStream } from "node:fs";
import { access, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { Option } from "commander";
import { z } from "zod";
import { type ManagementSubject } from "@studyflow/domain/access";
import { Conflict } from "@studyflow/domain/errors";
import { openTaskFile } from "@studyflow/domain/exports";
import { createFileStore } from "@studyflow/domain/files";
import { type ClockContext } from "@studyflow/domain/foundation";
import { TERMINAL_STATUSES, cancelTask, getVisibleTask, taskStatusWord, type TaskRow } from "@studyflow/domain/tasks";
import { createTaskQueue, createRedisConnection, queueTask } from "@studyflow/queue";
import { defineCommand, type CliContext } from "../command-definition";
import { fieldLines } from "../output";
import { createProgressReporter, progressModeFor, type ProgressStream } from "../progress";
import { jsonObject, studyKey, switchFlag, text } from "../flag-values";
import { UPLOADED_BY, requireStudy } from "../command-support";
import { UsageError } from "../failures";

/**
 * What every export command shares: queue the task the domain recorded, follow it until it
 * ends (a bar on a terminal, lines otherwise, nothing under --json), download its file, and say
 * where it went. Ctrl-C while following stops following and leaves the task running (the workers
 * finish it; `export:follow` picks it up again), unless --cancel-on-interrupt asks to cancel it:
 * an export someone started on purpose is rarely worth throwing away because a terminal closed.
 */

/** The operator, as the creator of the tasks the CLI starts; an admin, so it may see any task. */
export const OPERATOR: ManagementSubject = { subject: UPLOADED_BY, isAdmin: true };

/**
 * The Task row is read this often while following: a read by primary key per half second costs
 * Postgres nothing, and the workers commit progress once per batch, which takes about that long.
 */
export const POLL_INTERVAL_MS = 500;

/** What tests (and only they) put into the context: progress output and a stand-in for Ctrl-C. */
export interface FollowHooks {
  /** Where progress goes; process.stderr by default. */
  progress: ProgressStream;
  /** Aborted = the operator pressed Ctrl-C; by default SIGINT while following. */
  interrupt: AbortSignal;
  /** Overrides POLL_INTERVAL_MS. */
  pollIntervalMs: number;
}

export type ExportContext = CliContext & Partial<FollowHooks>;

/** The flag every export command starts with. */
export const studyFlag = () => new Option("--study <KEY>", "study key").makeOptionMandatory();

/** What the rows are called in the --filter help, with an example filter and the --sort help. */
export interface SelectionHelp {
  rows: string;
  filterExample: string;
  sortHelp: string;
}

/**
 * The row selection and compression flags of the commands that start an export; only the help
 * differs, as each kind of row has its own fields.
 */
export const selectionFlags = (help: SelectionHelp) => [
  new Option("--filter <JSON>", `only the ${help.rows} this Mongo-style filter matches, e.g. '${help.filterExample}'`),
  new Option("--sort <JSON>", help.sortHelp),
  new Option("--gzip", "store and download the file gzip-compressed"),
];

/**
 * The switch of the commands whose files can be CSV: by default the cells participants filled are
 * guarded against spreadsheet formulas; `--no-guard-formulas` writes case-backend's exact bytes.
 */
export const guardFormulasFlag = () =>
  new Option(
    "--no-guard-formulas",
    "write participants' text as it came, CASE's exact bytes (default: CSV cells starting with =, +, -, @, tab or CR get a ' in front)",
  );
export const guardFormulasValue = { guardFormulas: z.boolean().default(true) };

/** The flags every export command ends with. */
export const followFlags = () => [
  new Option("--out <FILE>", "where to write the file (default: the export's own name, in this directory)"),
  new Option("--cancel-on-interrupt", "cancel the task on Ctrl-C (default: leave it running and say how to follow it)"),
];
export const startFlags = () => [
  ...followFlags(),
  new Option("--no-wait", "queue the task, print it and return, without following or downloading it"),
];

export const followValues = { study: studyKey, out: text.optional(), cancelOnInterrupt: switchFlag };
export const startValues = { ...followValues, wait: z.boolean().default(true) };
export const selectionValues = { filter: jsonObject.optional(), sort: jsonObject.optional(), gzip: switchFlag };

export interface FollowOptions {
  studyKey: string;
  out?: string | undefined;
  cancelOnInterrupt: boolean;
}
export interface StartOptions extends FollowOptions {
  wait: boolean;
}
export interface SelectionOptions {
  filter?: Record<string, unknown> | undefined;
  sort?: Record<string, unknown> | undefined;
  gzip: boolean;
}

type FollowValues = z.output<z.ZodObject<typeof followValues>>;
type StartValues = z.output<z.ZodObject<typeof startValues>>;
type SelectionValues = z.output<z.ZodObject<typeof selectionValues>>;

/** The parsed `followValues`, as a command's input names them. */
export const followInput = (values: FollowValues): FollowOptions => ({
  studyKey: values.study,
  out: values.out,
  cancelOnInterrupt: values.cancelOnInterrupt,
});

/** The parsed `startValues` and `selectionValues`, as a start command's input names them. */
export const startInput = (values: StartValues & SelectionValues): StartOptions & SelectionOptions => ({
  ...followInput(values),
  wait: values.wait,
  filter: values.filter,
  sort: values.sort,
  gzip: values.gzip,
});

/** The selection as the domain's export requests take it: a flag not given is left out, not undefined. */
export const selectionRequest = (input: SelectionOptions) => ({
  ...(input.filter === undefined ? {} : { filter: input.filter }),
  ...(input.sort === undefined ? {} : { sort: input.sort }),
  gzip: input.gzip,
});

/** The selection as `selectionRequest` gives it to the domain. */
export type SelectionRequest = ReturnType<typeof selectionRequest>;

/**
 * What sets one export command apart from the others: its own flags and values (between --study
 * and the selection flags), the request they make, and the domain function that records its task.
 */
export interface ExportCommandSpec<Shape extends z.ZodRawShape, Request> {
  name: string;
  summary: string;
  flags: () => Option[];
  selection: SelectionHelp;
  values: Shape;
  request: (values: z.output<z.ZodObject<Shape>>) => Request;
  record: (
    db: CliContext["database"]["db"],
    studyKey: string,
    request: Request & SelectionRequest,
    createdBy: string,
    ctx: ClockContext,
  ) => Promise<TaskRow>;
}

/** The input of a command `defineExportCommand` made: the start options, the selection and its own request. */
export type ExportInput<Request> = StartOptions & SelectionOptions & { request: Request };

/**
 * An export command: `--study`, its own flags, the selection flags and the start flags; it checks
 * the study exists, records the task as the operator and starts it (startExport).
 */
export function defineExportCommand<Shape extends z.ZodRawShape, Request>(spec: ExportCommandSpec<Shape, Request>) {
  const schema = z.object({ ...spec.values, ...selectionValues, ...startValues });
  return defineCommand({
    name: spec.name,
    summary: spec.summary,
    flags: () => [studyFlag(), ...spec.flags(), ...selectionFlags(spec.selection), ...startFlags()],
    values: schema.transform((values): ExportInput<Request> => ({
      ...startInput(values as StartValues & SelectionValues),
      request: spec.request(values as z.output<z.ZodObject<Shape>>),
    })),
    uses: "database",
    run: async (ctx: ExportContext, input: ExportInput<Request>) => {
      await requireStudy(ctx.database.db, input.studyKey);
      return startExport(ctx, input, () =>
        spec.record(
          ctx.database.db,
          input.studyKey,
          { ...input.request, ...selectionRequest(input) },
          OPERATOR.subject,
          ctx,
        ),
      );
    },
  });
}

/** Following stopped by Ctrl-C; the message says what became of the task. Exit code 2. */
export class FollowInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FollowInterrupted";
  }
}

const followCommand = (studyKey: string, taskId: string) =>
  `npm run cli -- export:follow --study ${studyKey} --task ${taskId}`;

/** The counted things of a task kind, for the progress line. */
function unitOf(task: TaskRow): string {
  switch (task.kind) {
    case "export-responses":
      return "responses";
    case "export-reports":
      return "reports";
    default:
      return "participants";
  }
}

function taskData(task: TaskRow) {
  return {
    id: task.id,
    kind: task.kind,
    status: task.status,
    targetCount: task.targetCount,
    processedCount: task.processedCount,
    createdBy: task.createdBy,
    createdAt: task.createdAt.toISOString(),
    ...(task.error ? { error: task.error } : {}),
  };
}

/**
 * Queues a task the caller has just recorded (`record` runs the domain's create function), then
 * follows and downloads it unless --no-wait.
 */
export async function startExport(
  ctx: ExportContext,
  options: StartOptions,
  record: () => Promise<TaskRow>,
): Promise<Record<string, unknown>> {
  if (options.wait && options.out !== undefined) await requireDirectory(resolve(ctx.workingDirectory, options.out));
  const task = await record();
  await enqueue(ctx, task);
  if (!options.wait) {
    const data = { studyKey: options.studyKey, task: taskData(task), follow: followCommand(options.studyKey, task.id) };
    ctx.output.result(data, [
      `export task ${task.id} ${taskStatusWord(task.status)} (${task.targetCount} ${unitOf(task)})`,
      `follow it and download its file with: ${data.follow}`,
    ]);
    return data;
  }
  return followAndDownload(ctx, options, task);
}

/** One producer connection for the one job; closed whatever happens. */
async function enqueue(ctx: CliContext, task: TaskRow): Promise<void> {
  const connection = createRedisConnection(ctx.config.REDIS_URL, "producer");
  const queue = createTaskQueue(connection, ctx.config.QUEUE_PREFIX);
  try {
    await queueTask(queue, task);
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

/**
 * Refuses an --out whose directory does not exist before anything is queued: the mistake would
 * otherwise show only when the finished file is written, after the whole export ran.
 */
async function requireDirectory(target: string): Promise<void> {
  const directory = dirname(target);
  const found = await stat(directory).catch(() => undefined);
  if (!found?.isDirectory()) throw new UsageError(`--out ${target}: the directory ${directory} does not exist`);
}

/** Follows a task that exists (export:follow, or right after starting it) and downloads its file. */
export async function followAndDownload(
  ctx: ExportContext,
  options: FollowOptions,
  started: TaskRow,
): Promise<Record<string, unknown>> {
  if (options.out !== undefined) await requireDirectory(resolve(ctx.workingDirectory, options.out));
  const finished = await follow(ctx, options, started);
  if (finished.status !== "completed") {
    const why = finished.error ? `: ${finished.error}` : "";
    throw new Error(`export task ${finished.id} ${taskStatusWord(finished.status)}${why}`);
  }
  const file = await download(ctx, finished, options.out);
  const data = { studyKey: options.studyKey, task: taskData(finished), file };
  ctx.output.result(data, [
    `exported ${file.rows} ${unitOf(finished)} to ${file.path}`,
    ...fieldLines([
      ["task", finished.id],
      ["rows", file.rows],
      ["size", `${formatBytes(file.size)}${file.contentEncoding ? ` (${file.contentEncoding})` : ""}`],
      ["type", file.contentType],
    ]).map((line) => `  ${line}`),
  ]);
  return data;
}

/** Polls the Task row until it ends, or until Ctrl-C. */
async function follow(ctx: ExportContext, options: FollowOptions, started: TaskRow): Promise<TaskRow> {
  const stream = ctx.progress ?? process.stderr;
  const reporter = createProgressReporter({
    mode: progressModeFor(stream, ctx.output.json),
    stream,
    label: `export ${started.id.slice(0, 8)}`,
    unit: unitOf(started),
    clock: ctx.clock,
  });
  const { signal, release } = interruptSignal(ctx.interrupt);
  let task = started;
  try {
    for (;;) {
      reporter.update(task);
      if (TERMINAL_STATUSES.includes(task.status)) return task;
      await pause(ctx.pollIntervalMs ?? POLL_INTERVAL_MS, signal);
      if (signal.aborted) break;
      task = await getVisibleTask(ctx.database.db, options.studyKey, task.id, OPERATOR);
    }
  } finally {
    reporter.stop();
    release();
  }
  // Ctrl-C: the task is the workers', not this process's; only an explicit flag ends it.
  if (!options.cancelOnInterrupt) {
    throw new FollowInterrupted(
      `interrupted: export task ${task.id} keeps running; follow it and download its file with: ${followCommand(options.studyKey, task.id)}`,
    );
  }
  try {
    const canceled = await cancelTask(ctx.database.db, task, OPERATOR, ctx);
    throw new FollowInterrupted(`interrupted: export task ${canceled.id} canceled`);
  } catch (error) {
    // It ended between the last read and the cancel: say so rather than claim a cancel.
    if (error instanceof Conflict)
      throw new FollowInterrupted(`interrupted: export task ${task.id} not canceled: ${error.message}`);
    throw error;
  }
}

/** SIGINT as an AbortSignal for as long as the command follows; a test's own signal otherwise. */
function interruptSignal(given: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  if (given) return { signal: given, release: () => undefined };
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once("SIGINT", onInterrupt);
  return { signal: controller.signal, release: () => process.off("SIGINT", onInterrupt) };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) return done();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}

export interface DownloadedFile {
  path: string;
  size: number;
  rows: number;
  contentType: string;
  contentEncoding?: string;
}

/**
 * Streams the task's file to `out` (or its own name in the working directory). It is written
 * beside the target under a temporary name and renamed when complete, so an interrupted
 * download never leaves a file that looks whole. A default name never overwrites a file.
 */
async function download(ctx: CliContext, task: TaskRow, out: string | undefined): Promise<DownloadedFile> {
  // The store the workers write export files to, configured as theirs is.
  const store = createFileStore(ctx.database.db, {
    backend: ctx.config.EXPORT_FILE_STORE,
    directory: ctx.config.RESULT_DIR,
  });
  const file = await openTaskFile(ctx.database.db, store, task);
  const target = resolve(ctx.workingDirectory, out ?? basename(file.fileName));
  const partial = `${target}.part-${process.pid}`;
  try {
    if (out === undefined) await refuseExisting(target);
    // every export is stored gzip; a file not asked for as .gz is written decompressed
    const unpack = file.contentEncoding === "gzip" && !file.gzipFile;
    if (unpack) await pipeline(file.body, createGunzip(), createWriteStream(partial, { flags: "wx" }));
    else await pipeline(file.body, createWriteStream(partial, { flags: "wx" }));
    if (out === undefined) await refuseExisting(target);
    await rename(partial, target);
  } catch (error) {
    file.body.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  return {
    path: target,
    // the bytes written
    size: (await stat(target)).size,
    rows: file.rows,
    contentType: file.contentType,
    ...(file.gzipFile ? { contentEncoding: "gzip" } : {}),
  };
}

async function refuseExisting(target: string): Promise<void> {
  const exists = await access(target).then(
    () => true,
    () => false,
  );
  if (exists) throw new Conflict(`${target} exists already; name another file with --out`);
}

const UNITS = ["B", "kB", "MB", "GB", "TB"];

/** 1234567 → "1.2 MB" (decimal units, as file managers show them). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
