import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { createParticipantFormatter, type ExportParticipant } from "@studyflow/case-export";
import { participants, type Database, type Executor, type ParticipantExportInput } from "@studyflow/db";
import { translateCaseFilter, translateCaseSort } from "../case-filter/index";
import { Invalid } from "../errors";
import { getStudy } from "../studies/study-repository";
import type { TaskRow } from "../tasks/task-row";
import { countSelection, jsonValue, textValue, type ExportSelection } from "./export-keyset";
import { exportKind, exportTimestamp } from "./export-kind";
import { invalidFrom } from "./export-request";
import { insertExportTask } from "./export-task-row";

export interface ParticipantExportRequest {
  /** CASE's Mongo-style filter on participants (see case-filter/). */
  filter?: unknown;
  /** Only `{"participantID": 1}` (the export's own order) is accepted. */
  sort?: unknown;
  gzip: boolean;
}

const requestSchema = z.object({ gzip: z.boolean() });

/**
 * Participant exports run in participant-id order, the keyset of the study's unique index; a sort
 * on anything else would need the whole study sorted per batch, so it is refused rather than
 * silently ignored.
 */
function checkSort(sort: unknown): void {
  const keys = translateCaseSort("participants", sort);
  if (keys.length === 0) return;
  if (keys.length > 1 || keys[0]?.field !== "participantID" || keys[0].direction !== "asc") {
    throw new Invalid('sort: a participant export is in participant order; only {"participantID": 1} is accepted');
  }
}

function participantsWhere(studyKey: string, filter: unknown) {
  const parts = [eq(participants.studyKey, studyKey)];
  if (filter !== undefined) parts.push(translateCaseFilter("participants", filter));
  return and(...parts) ?? sql`true`;
}

/** The participants an export with this filter would hold (the study must exist). */
export async function countParticipants(
  db: Executor,
  studyKey: string,
  selection: { filter?: unknown },
): Promise<number> {
  await getStudy(db, studyKey);
  return countSelection(db, {
    from: sql`${participants}`,
    where: participantsWhere(studyKey, selection.filter),
    keys: [],
    direction: "asc",
  });
}

const inputOf = (task: TaskRow) => task.input as ParticipantExportInput;

/** `export-participants`: the study's participant states in CASE's JSON document. */
export const participantExportKind = exportKind<ExportParticipant>({
  selection(_tx, task): Promise<ExportSelection> {
    return Promise.resolve({
      from: sql`${participants}`,
      where: participantsWhere(task.studyKey, inputOf(task).filter),
      keys: [{ expression: sql`${participants.participantId}`, cast: "text" }],
      direction: "asc",
    });
  },
  columns: () => sql`${participants.id} as id, ${participants.participantId} as participant_id,
    ${participants.currentStudySession} as current_study_session, ${participants.studyStatus} as study_status,
    ${participants.enteredAt} as entered_at, ${participants.modifiedAt} as modified_at,
    ${participants.flags} as flags, ${participants.linkingCodes} as linking_codes,
    ${participants.assignedSurveys} as assigned_surveys, ${participants.lastSubmissions} as last_submissions,
    ${participants.messages} as messages, ${participants.hashedAccountId} as hashed_account_id,
    ${participants.isMainProfile} as is_main_profile`,
  toExportRow(row) {
    return {
      id: textValue(row.id),
      participantId: textValue(row.participant_id),
      currentStudySession: textValue(row.current_study_session),
      studyStatus: textValue(row.study_status),
      enteredAt: Number(row.entered_at),
      modifiedAt: Number(row.modified_at),
      flags: jsonValue(row.flags, {}),
      linkingCodes: jsonValue(row.linking_codes, {}),
      assignedSurveys: jsonValue(row.assigned_surveys, []),
      lastSubmissions: jsonValue(row.last_submissions, {}),
      messages: jsonValue(row.messages, []),
      hashedAccountId: (row.hashed_account_id as string | null) ?? null,
      isMainProfile: (row.is_main_profile as boolean | null) ?? null,
    };
  },
  formatter: (_tx, task) => Promise.resolve(createParticipantFormatter({ studyKey: task.studyKey })),
  baseName: (task) => `participants_${exportTimestamp(task.createdAt)}`,
  gzip: (task) => inputOf(task).gzip,
});

/** Records a participant export (status queued; the caller queues it with queueTask). */
export async function createParticipantExportTask(
  db: Database,
  studyKey: string,
  request: ParticipantExportRequest,
  createdBy: string,
): Promise<TaskRow> {
  const parsed = requestSchema.safeParse({ gzip: request.gzip });
  if (!parsed.success) throw invalidFrom(parsed.error);
  checkSort(request.sort);
  if (request.filter !== undefined) translateCaseFilter("participants", request.filter);
  return db.transaction(async (tx) => {
    await getStudy(tx, studyKey);
    const input: ParticipantExportInput = {
      gzip: parsed.data.gzip,
      ...(request.filter === undefined ? {} : { filter: request.filter }),
    };
    const targetCount = await countSelection(tx, {
      from: sql`${participants}`,
      where: participantsWhere(studyKey, input.filter),
      keys: [],
      direction: "asc",
    });
    return insertExportTask(tx, {
      studyKey,
      kind: "export-participants",
      input,
      createdBy,
      targetCount,
      fileType: createParticipantFormatter({ studyKey }).contentType,
    });
  });
}
