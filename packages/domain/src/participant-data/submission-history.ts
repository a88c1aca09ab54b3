import { and, desc, eq } from "drizzle-orm";
import { surveyResponses, type Executor } from "@studyflow/db";
import { getActiveStudyForParticipant } from "./own-data";
import { participantsOfProfiles } from "./profile-participants";
import { submittedSurveyInfos, type SurveyInfo } from "./survey-infos";

export interface Submission {
  profileId: string;
  /** When the response arrived, Unix seconds. */
  timestamp: number;
  surveyKey: string;
  versionId: string;
}

export interface SubmissionHistory {
  submissions: Submission[];
  /** One per submitted survey key, from the version its first listed submission names. */
  surveyInfos: SurveyInfo[];
}

/**
 * The latest submissions (at most `limit` per profile, newest submitted first, then newest
 * arrived) of the active participants of the given profiles in a study, profile after profile,
 * as case-backend lists them. The caller has checked that the profiles are the user's.
 * @throws NotFound for an unknown study; Conflict for an inactive one.
 */
export async function listSubmissionHistory(
  db: Executor,
  studyKey: string,
  profileIds: readonly string[],
  limit: number,
): Promise<SubmissionHistory> {
  const study = await getActiveStudyForParticipant(db, studyKey);
  const found = await participantsOfProfiles(db, study, profileIds);
  const submissions: Submission[] = [];
  for (const { profileId, participant } of found) {
    if (participant.studyStatus !== "active") continue;
    const rows = await db
      .select({ key: surveyResponses.key, versionId: surveyResponses.versionId, arrivedAt: surveyResponses.arrivedAt })
      .from(surveyResponses)
      .where(and(eq(surveyResponses.studyKey, studyKey), eq(surveyResponses.participantId, participant.participantId)))
      .orderBy(desc(surveyResponses.submittedAt), desc(surveyResponses.arrivedAt), desc(surveyResponses.id))
      .limit(limit);
    for (const row of rows) {
      submissions.push({ profileId, timestamp: row.arrivedAt, surveyKey: row.key, versionId: row.versionId });
    }
  }
  const firstOfSurvey = new Map<string, { surveyKey: string; versionId: string }>();
  for (const submission of submissions) {
    if (!firstOfSurvey.has(submission.surveyKey)) {
      firstOfSurvey.set(submission.surveyKey, { surveyKey: submission.surveyKey, versionId: submission.versionId });
    }
  }
  return { submissions, surveyInfos: await submittedSurveyInfos(db, studyKey, [...firstOfSurvey.values()]) };
}
