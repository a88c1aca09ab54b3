import { and, eq, sql } from "drizzle-orm";
import { participants, type Executor } from "@studyflow/db";
import { NotFound } from "../errors";
import type { ParticipantRow } from "../participants/participant-repository";
import { getStudy } from "../studies/study-repository";
import { readExplorerPage, type ExplorerPage, type ExplorerQuery } from "./explorer-page";
import { idPage } from "./id-buckets";
import type { ExplorerPageCache } from "./page-cache";
import { inKeys, inPageOrder } from "./paged-read";

/** A participants row as the statements of id-buckets.ts return it (bigint as text). */
interface RawParticipant extends Record<string, unknown> {
  id: string;
  study_key: string;
  participant_id: string;
  current_study_session: string;
  entered_at: string;
  modified_at: string;
  study_status: string;
  flags: ParticipantRow["flags"];
  linking_codes: ParticipantRow["linkingCodes"];
  assigned_surveys: ParticipantRow["assignedSurveys"];
  last_submissions: ParticipantRow["lastSubmissions"];
  messages: ParticipantRow["messages"];
  hashed_account_id: string | null;
  is_main_profile: boolean | null;
  version: number;
}

const RAW_COLUMNS = sql.raw(
  "id, study_key, participant_id, current_study_session, entered_at, modified_at, study_status, flags, " +
    "linking_codes, assigned_surveys, last_submissions, messages, hashed_account_id, is_main_profile, version",
);

/** The row as drizzle's select of the table reads it. */
function fromRaw(raw: RawParticipant): ParticipantRow {
  return {
    id: raw.id,
    studyKey: raw.study_key,
    participantId: raw.participant_id,
    currentStudySession: raw.current_study_session,
    enteredAt: Number(raw.entered_at),
    modifiedAt: Number(raw.modified_at),
    studyStatus: raw.study_status,
    flags: raw.flags,
    linkingCodes: raw.linking_codes,
    assignedSurveys: raw.assigned_surveys,
    lastSubmissions: raw.last_submissions,
    messages: raw.messages,
    hashedAccountId: raw.hashed_account_id,
    isMainProfile: raw.is_main_profile,
    version: raw.version,
  };
}

/** A page of the study's participants (every status, as case-backend lists them), by participant id unless sorted. */
export async function listExplorerParticipants(
  db: Executor,
  studyKey: string,
  query: ExplorerQuery,
  cache?: ExplorerPageCache,
): Promise<ExplorerPage<ParticipantRow>> {
  await getStudy(db, studyKey);
  return readExplorerPage(
    db,
    "participants",
    studyKey,
    query,
    cache,
    async (keys, executor, within) =>
      inPageOrder(
        keys,
        await executor
          .select()
          .from(participants)
          .where(and(eq(participants.studyKey, studyKey), within ?? inKeys(participants.participantId, keys))),
        (row) => row.participantId,
      ),
    async (executor, offset, limit) => {
      const read = await idPage<RawParticipant>(executor, studyKey, offset, limit, RAW_COLUMNS);
      return read && { totalCount: read.totalCount, rows: read.rows.map(fromRaw) };
    },
  );
}

export async function getExplorerParticipant(
  db: Executor,
  studyKey: string,
  participantId: string,
): Promise<ParticipantRow> {
  await getStudy(db, studyKey);
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .limit(1);
  if (!row) throw new NotFound(`participant "${participantId}" not found in study "${studyKey}"`);
  return row;
}
