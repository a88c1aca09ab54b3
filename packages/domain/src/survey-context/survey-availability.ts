import type { StoredAssignedSurvey } from "@studyflow/db";
import { Forbidden } from "../errors";
import { isAssignmentValid } from "../participants/participant-views";

/**
 * Who may open a survey, from the CASE Survey's `availableFor` (case-editor-tools set it; absent
 * or unknown reads as "any participant of the study", as case-backend reads it).
 */
export const SURVEY_AVAILABLE_FOR = {
  public: "public",
  temporaryParticipants: "temporary_participants",
  activeParticipants: "active_participants",
  participantsIfAssigned: "participants_if_assigned",
} as const;

/** The survey's `availableFor`, "" when it has none. */
export function availableForOf(definition: Record<string, unknown>): string {
  const value = definition["availableFor"];
  return typeof value === "string" ? value : "";
}

/**
 * A profile's participant may open a survey unless it is for assigned participants only and not
 * assigned to it (valid now).
 */
export function assertOpenableByParticipant(
  availableFor: string,
  surveyKey: string,
  assigned: readonly StoredAssignedSurvey[],
  nowSeconds: number,
): void {
  if (availableFor !== SURVEY_AVAILABLE_FOR.participantsIfAssigned) return;
  const open = assigned.some((survey) => survey.surveyKey === surveyKey && isAssignmentValid(survey, nowSeconds));
  if (!open) throw new Forbidden(`survey "${surveyKey}" is not assigned to this participant or not valid now`);
}

/**
 * Without an account: with a temporary participant, a survey for temporary participants or the
 * public; with none, a public survey only.
 */
export function assertOpenableAnonymously(availableFor: string, surveyKey: string, withParticipant: boolean): void {
  if (availableFor === SURVEY_AVAILABLE_FOR.public) return;
  if (withParticipant && availableFor === SURVEY_AVAILABLE_FOR.temporaryParticipants) return;
  throw new Forbidden(
    withParticipant
      ? `survey "${surveyKey}" is not available to temporary participants`
      : `survey "${surveyKey}" is not public: give the temporary participant's pid`,
  );
}
