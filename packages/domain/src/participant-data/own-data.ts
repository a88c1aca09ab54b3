import type { Executor } from "@studyflow/db";
import { listExplorerReports, type ReportRow } from "../data-explorer/explorer-reports";
import type { ExplorerPage, ExplorerQuery } from "../data-explorer/explorer-page";
import { listExplorerResponses } from "../data-explorer/explorer-responses";
import { Conflict, Invalid } from "../errors";
import { getProfileParticipant } from "../participants/participant-views";
import { getStudy, type StudyRow } from "../studies/study-repository";
import { participantIdOfProfile } from "./profile-participants";

/**
 * What a participant reads of their own study data, each read bounded to the participant of one
 * of their profiles (the caller has checked the profile is the user's). The filters a participant
 * app sends are the researchers' Mongo-style subset, through the data explorer's translator and
 * pages; the participant's own id is always added to them, so no filter reaches another's rows.
 */

/** The study, which must be active (case-backend reads assigned surveys, history and linking codes only then). */
export async function getActiveStudyForParticipant(db: Executor, studyKey: string): Promise<StudyRow> {
  const study = await getStudy(db, studyKey);
  if (study.status !== "active") throw new Conflict(`study "${studyKey}" is not active`);
  return study;
}

/**
 * `filter` with the participant's id as a condition of its own. Conditions of a document are all
 * required, so whatever the filter says elsewhere (an `$or` naming other ids included), rows of
 * other participants never match.
 */
export function ownFilter(filter: unknown, participantId: string): Record<string, unknown> {
  if (filter === undefined || filter === null) return { participantID: participantId };
  if (typeof filter !== "object" || Array.isArray(filter))
    throw new Invalid("filter: expected an object of conditions");
  return { ...(filter as Record<string, unknown>), participantID: participantId };
}

/** A page of the profile's reports in the study, newest first (sort is not offered, as in case-backend). */
export async function listOwnReports(
  db: Executor,
  studyKey: string,
  profileId: string,
  query: Omit<ExplorerQuery, "sort">,
): Promise<ExplorerPage<ReportRow>> {
  const study = await getStudy(db, studyKey);
  const participantId = participantIdOfProfile(study, profileId);
  return listExplorerReports(
    db,
    studyKey,
    { ...query, filter: ownFilter(query.filter, participantId) },
    { participantId },
  );
}

/** A page of the profile's responses to one survey in the study, in the explorer's shape (flattened by the caller). */
export async function listOwnResponses(
  db: Executor,
  studyKey: string,
  profileId: string,
  surveyKey: string | undefined,
  query: ExplorerQuery,
) {
  if (!surveyKey) throw new Invalid("surveyKey is required");
  const study = await getStudy(db, studyKey);
  const participantId = participantIdOfProfile(study, profileId);
  return listExplorerResponses(db, studyKey, surveyKey, { ...query, filter: ownFilter(query.filter, participantId) });
}

/**
 * The value of one of the profile's linking codes in the study; "" when it has none under that
 * key, as case-backend answers. Only the key asked for is read out: linking codes are keys into
 * other systems, so the participant state never lists them.
 * @throws NotFound for an unknown study or a profile that is no participant; Conflict for an inactive study.
 */
export async function getOwnLinkingCode(
  db: Executor,
  studyKey: string,
  profileId: string,
  key: string,
): Promise<string> {
  await getActiveStudyForParticipant(db, studyKey);
  const participant = await getProfileParticipant(db, studyKey, profileId);
  return Object.hasOwn(participant.linkingCodes, key) ? (participant.linkingCodes[key] ?? "") : "";
}
