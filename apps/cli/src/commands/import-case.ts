import { createWriteStream } from "node:fs";
import { resolve } from "node:path";
import { finished } from "node:stream/promises";
import { Option } from "commander";
import { z } from "zod";
import {
  CASE_IMPORT_PARTS,
  importCaseDump,
  type CaseImportPart,
  type CaseImportSummary,
  type DumpCollectionFile,
} from "@studyflow/domain/case-import";
import { Invalid } from "@studyflow/domain/errors";
import { createFileStore } from "@studyflow/domain/files";
import { defineCommand, type CliContext } from "../command-definition";
import { UsageError } from "../failures";
import { commaList, studyKey, switchFlag, text } from "../flag-values";
import { tableLines } from "../output";
import { createProgressReporter, progressModeFor, type ProgressReporter, type ProgressStream } from "../progress";

/** Where the problems go when --report is not given, in the directory the command was typed in. */
export const DEFAULT_REPORT_FILE = "case-import-report.jsonl";

export interface ImportCaseInput {
  dump: string;
  instance: string;
  dbPrefix: string;
  globalSecret?: string;
  only: CaseImportPart[];
  study?: string;
  dryRun: boolean;
  replace: boolean;
  prune: boolean;
  report: string;
  /** case-backend's participant file folder (its filestore path). */
  filesDir?: string;
}

const kilobytes = (bytes: number) => Math.ceil(bytes / 1024);

function summaryLines(summary: CaseImportSummary, reportPath: string): string[] {
  const rows = summary.collections.map((c) => [
    `${c.database}/${c.collection}`,
    String(c.read),
    String(c.inserted),
    String(c.updated),
    String(c.unchanged),
    String(c.skipped),
    String(c.ignored),
    String(c.removed),
    c.resumedAfter > 0 ? `after ${c.resumedAfter}` : "",
  ]);
  const removed = summary.collections.reduce((sum, c) => sum + c.removed, 0);
  const written = summary.changed - removed;
  const andRemoved = removed > 0 ? ` and ${removed} row(s) the dump no longer has removed` : "";
  const verdict = summary.dryRun
    ? `dry run: ${written} document(s) would be written${removed > 0 ? ` and ${removed} row(s) removed` : ""}; nothing was`
    : summary.changed === 0
      ? "nothing changed: studyflow already had everything this dump holds"
      : `${written} document(s) written${andRemoved}`;
  return [
    ...tableLines([
      ["collection", "read", "inserted", "updated", "unchanged", "skipped", "ignored", "removed", "resumed"],
      ...rows,
    ]),
    "",
    verdict,
    summary.problems === 0 ? "no problems" : `${summary.problems} problem(s), listed in ${reportPath}`,
  ];
}

export async function importCase(ctx: CliContext & { progress?: ProgressStream }, input: ImportCaseInput) {
  const configured = ctx.config.CASE_STUDY_GLOBAL_SECRET;
  if (
    input.globalSecret !== undefined &&
    configured !== undefined &&
    configured !== "" &&
    configured !== input.globalSecret
  ) {
    throw new UsageError(
      "--global-secret differs from CASE_STUDY_GLOBAL_SECRET: the API and workers would derive other participant ids than CASE did",
    );
  }
  const globalSecret = input.globalSecret ?? (configured === "" ? undefined : configured);
  const reportPath = resolve(ctx.workingDirectory, input.report);
  const report = createWriteStream(reportPath, { flags: "w" });
  const stream = ctx.progress ?? process.stderr;
  const mode = progressModeFor(stream, ctx.output.json);
  let reporter: ProgressReporter | undefined;
  const snapshot = (file: DumpCollectionFile, read: number, status: string) => ({
    status,
    processedCount: kilobytes(read),
    targetCount: kilobytes(file.bytes),
  });
  let summary: CaseImportSummary;
  try {
    summary = await importCaseDump(
      ctx.database.db,
      {
        dumpDir: resolve(ctx.workingDirectory, input.dump),
        instance: input.instance,
        dbPrefix: input.dbPrefix,
        only: input.only,
        ...(input.study === undefined ? {} : { study: input.study }),
        dryRun: input.dryRun,
        replace: input.replace,
        prune: input.prune,
        ...(input.filesDir === undefined ? {} : { filesDir: resolve(ctx.workingDirectory, input.filesDir) }),
        // where imported files' bytes go, and where --prune removes those of files CASE deleted
        fileStore: createFileStore(ctx.database.db, {
          backend: ctx.config.EXPORT_FILE_STORE,
          directory: ctx.config.RESULT_DIR,
        }),
      },
      {
        collectionStarted: (file) => {
          reporter = createProgressReporter({
            mode,
            stream,
            label: `import ${file.database}/${file.collection}`,
            unit: file.gzip ? "kB (gzip)" : "kB",
            clock: ctx.clock,
          });
          reporter.update(snapshot(file, 0, "running"));
        },
        progress: (file, read) => reporter?.update(snapshot(file, read, "running")),
        collectionFinished: (file) => {
          reporter?.update(snapshot(file, file.bytes, "completed"));
          reporter?.stop();
        },
        problem: (problem) => {
          report.write(`${JSON.stringify(problem)}\n`);
        },
      },
      ctx,
    );
  } finally {
    reporter?.stop();
    report.end();
    await finished(report);
  }
  const data = { ...summary, report: reportPath };
  const warnings =
    input.only.includes("studies") && globalSecret === undefined
      ? [
          "",
          "note: set CASE_STUDY_GLOBAL_SECRET (case-backend's STUDY_GLOBAL_SECRET) for the API and workers, so that",
          "      profiles entering imported studies keep the participant ids CASE gave them",
        ]
      : [];
  ctx.output.result(data, [...summaryLines(summary, reportPath), ...warnings]);
  if (summary.problems > 0) {
    throw new Invalid(`${summary.problems} document(s) or file(s) were not imported; see ${reportPath}`);
  }
  return data;
}

export const importCaseCommand = defineCommand({
  name: "import:case",
  summary:
    "import a case-backend mongodump (studies, rules, surveys, participants, responses, reports, accounts, researchers, messages); reruns change nothing",
  flags: () => [
    new Option(
      "--dump <DIR>",
      "mongodump's output directory, holding <prefix><instance>_studyDB, …_users",
    ).makeOptionMandatory(),
    new Option("--instance <ID>", "case-backend's instance id").makeOptionMandatory(),
    new Option("--db-prefix <PREFIX>", "case-backend's DB_PREFIX in front of the instance id (default none)"),
    new Option(
      "--global-secret <SECRET>",
      "case-backend's STUDY_GLOBAL_SECRET (checked against CASE_STUDY_GLOBAL_SECRET)",
    ),
    new Option("--only <PARTS>", `any of ${CASE_IMPORT_PARTS.join(", ")} (default all)`),
    new Option("--study <KEY>", "only this study's collections"),
    new Option("--dry-run", "read, count and report; write nothing"),
    new Option("--replace", "overwrite studies and accounts studyflow has of its own with CASE's"),
    new Option(
      "--prune",
      "remove what an earlier import brought in and this dump no longer has (accounts, researchers, grants, API keys, templates, schedules, waiting e-mails); without it, each is reported",
    ),
    new Option(
      "--files-dir <DIR>",
      "case-backend's participant file folder (its filestore path): the uploaded files' bytes come along",
    ),
    new Option("--report <FILE>", `JSON lines of what was not imported (default ${DEFAULT_REPORT_FILE})`),
  ],
  values: z
    .object({
      dump: text,
      instance: text,
      dbPrefix: z.string().default(""),
      globalSecret: text.optional(),
      only: commaList
        .pipe(z.array(z.enum(CASE_IMPORT_PARTS, { error: `lists any of ${CASE_IMPORT_PARTS.join(", ")}` })))
        .default([...CASE_IMPORT_PARTS]),
      study: studyKey.optional(),
      dryRun: switchFlag,
      replace: switchFlag,
      prune: switchFlag,
      report: text.default(DEFAULT_REPORT_FILE),
      filesDir: text.optional(),
    })
    .transform(({ globalSecret, study, only, filesDir, ...rest }): ImportCaseInput => ({
      ...rest,
      only: [...new Set(only)],
      ...(globalSecret === undefined ? {} : { globalSecret }),
      ...(study === undefined ? {} : { study }),
      ...(filesDir === undefined ? {} : { filesDir }),
    })),
  uses: "database",
  run: importCase,
});
