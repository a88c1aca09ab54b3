/**
 * Where an export's time goes, measured in this process without the queue and the file store: the
 * same rows read in keyset batches on (arrived_at, id), the exports' default order, with the
 * answers fetched as their JSON text as the export reads them, then formatted by
 * @studyflow/case-export (which reads the answers from the text) and written to a local file. The
 * sum is what one process can do at best with this driver and formatter; comparing it with the
 * pipeline's figure shows what the task machinery (chunks, checkpoints, the file store, the
 * download) adds.
 */
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { once } from "node:events";
import {
  createResponseFormatter,
  DEFAULT_QUESTION_OPTION_SEP,
  type ExportResponse,
  type ResponseExportFormat,
} from "@studyflow/case-export";
import type { DbHandle } from "@studyflow/db";
import { systemClock } from "@studyflow/domain/foundation";

export interface StageFigures {
  format: ResponseExportFormat;
  rows: number;
  bytes: number;
  /** Seconds in each stage, summed over the batches. */
  readSeconds: number;
  /** Formatting, reading the answers from their JSON text included. */
  formatSeconds: number;
  writeSeconds: number;
}

interface RawRow {
  id: string;
  participant_id: string;
  key: string;
  version_id: string;
  opened_at: string;
  submitted_at: string;
  arrived_at: string;
  responses: string;
  context: Record<string, string>;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

export async function measureExportStages(
  db: DbHandle,
  studyKey: string,
  surveyKey: string,
  format: ResponseExportFormat,
  directory: string,
  batchSize: number,
): Promise<StageFigures> {
  const versions = await db.sql<{ version_id: string; definition: Record<string, unknown>; published_at: string }[]>`
    select version_id, definition, published_at::text from survey_versions
    where study_key = ${studyKey} and survey_key = ${surveyKey} and unpublished_at is null order by id`;
  const formatter = createResponseFormatter(
    surveyKey,
    versions.map((version) => ({
      versionId: version.version_id,
      definition: version.definition,
      publishedAt: Math.floor(Date.parse(version.published_at) / 1000),
      unpublishedAt: null,
    })),
    {
      format,
      questionOptionSep: DEFAULT_QUESTION_OPTION_SEP,
      shortKeys: false,
      extraContextColumns: [],
      includeMeta: { position: false, initTimes: false, displayedTimes: false, responsedTimes: false },
      now: Math.floor(systemClock() / 1000),
      accountColumns: false,
    },
  );
  const file = path.join(directory, `stages-${format}${formatter.extension}`);
  const out = createWriteStream(file);
  const figures: StageFigures = {
    format,
    rows: 0,
    bytes: 0,
    readSeconds: 0,
    formatSeconds: 0,
    writeSeconds: 0,
  };
  const write = async (text: string) => {
    const started = performance.now();
    figures.bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, "drain");
    figures.writeSeconds += seconds(started);
  };
  try {
    await write(formatter.start());
    let after: { arrivedAt: string; id: string } | null = null;
    for (;;) {
      let started = performance.now();
      const rows: RawRow[] = await db.sql<RawRow[]>`
        select id, participant_id, key, version_id, opened_at, submitted_at, arrived_at,
          responses::text as responses, context
        from survey_responses
        where study_key = ${studyKey} and key = ${surveyKey}
          ${after ? db.sql`and (arrived_at, id) > (${after.arrivedAt}, ${after.id})` : db.sql``}
        order by arrived_at, id limit ${batchSize}`;
      figures.readSeconds += seconds(started);
      const last = rows.at(-1);
      if (!last) break;
      after = { arrivedAt: last.arrived_at, id: last.id };

      started = performance.now();
      const batch: ExportResponse[] = rows.map((row) => ({
        id: row.id,
        participantId: row.participant_id,
        key: row.key,
        versionId: row.version_id,
        openedAt: Number(row.opened_at),
        submittedAt: Number(row.submitted_at),
        arrivedAt: Number(row.arrived_at),
        responses: row.responses,
        context: row.context,
      }));
      const { text } = formatter.format(batch, figures.rows > 0);
      figures.formatSeconds += seconds(started);
      await write(text);
      figures.rows += rows.length;
    }
    await write(formatter.end(figures.rows > 0));
    const started = performance.now();
    out.end();
    await once(out, "finish");
    figures.writeSeconds += seconds(started);
    return figures;
  } finally {
    out.destroy();
    await rm(file, { force: true });
  }
}
