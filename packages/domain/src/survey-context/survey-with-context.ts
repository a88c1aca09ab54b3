import { and, asc, eq } from "drizzle-orm";
import {
  dropPrefillsMissingFromSurvey,
  readOnlyServices,
  resolvePrefillRules,
  resolveSurveyContext,
  type EngineEnv,
  type ParticipantState,
  type PrefillProblem,
  type StudyVariable,
  type SurveyContext,
  type SurveyPrefill,
} from "@studyflow/engine";
import { participants, studyVariables, type Executor } from "@studyflow/db";
import { Conflict, NotFound } from "../errors";
import { engineEnvFor, type DomainContext } from "../events/event-runner";
import { nowSeconds } from "../foundation/clock";
import { participantIdsInStudy } from "../participants/participant-ids";
import { toEngineState, type ParticipantRow } from "../participants/participant-repository";
import { getStudy, type StudyRow } from "../studies/study-repository";
import { currentSurveyVersion, type SurveyVersion } from "../surveys/survey-versions";
import {
  SURVEY_AVAILABLE_FOR,
  assertOpenableAnonymously,
  assertOpenableByParticipant,
  availableForOf,
} from "./survey-availability";

/**
 * A survey as a participant opens it (case-backend's getSurveyWithContext): the current version,
 * the context it is rendered with and the answers it starts with. Nothing here writes.
 */
export interface SurveyWithContext {
  version: SurveyVersion;
  /** null when no participant opens it (a public survey without a temporary participant). */
  context: SurveyContext | null;
  /** null when the survey has no prefill rules. */
  prefill: SurveyPrefill | null;
  /** Rules that were skipped, for the server's log. */
  problems: PrefillProblem[];
}

/** The study, which must be active: participants open surveys of running studies only. */
async function activeStudy(db: Executor, studyKey: string): Promise<StudyRow> {
  const study = await getStudy(db, studyKey);
  if (study.status !== "active") throw new Conflict(`study "${studyKey}" is not active`);
  return study;
}

async function currentVersion(db: Executor, studyKey: string, surveyKey: string): Promise<SurveyVersion> {
  const version = await currentSurveyVersion(db, studyKey, surveyKey);
  if (!version) throw new NotFound(`survey "${surveyKey}" has no published version in study "${studyKey}"`);
  return version;
}

async function readParticipant(db: Executor, studyKey: string, participantId: string) {
  const [row] = await db
    .select()
    .from(participants)
    .where(and(eq(participants.studyKey, studyKey), eq(participants.participantId, participantId)))
    .limit(1);
  return row;
}

async function readStudyVariables(db: Executor, studyKey: string): Promise<StudyVariable[]> {
  const rows = await db
    .select({ key: studyVariables.key, type: studyVariables.type, value: studyVariables.value })
    .from(studyVariables)
    .where(eq(studyVariables.studyKey, studyKey))
    .orderBy(asc(studyVariables.key));
  return rows.map((row) => ({ ...row, value: row.value as StudyVariable["value"] }));
}

/** The engine environment of these reads: the study's services with every writing port refused. */
function readOnlyEnv(db: Executor, study: StudyRow, ctx: DomainContext): EngineEnv {
  const env = engineEnvFor(db, study, ctx);
  return { ...env, services: readOnlyServices(env.services) };
}

/**
 * Evaluates the version's context rules (for a participant state; none: no context) and prefill
 * rules, and drops prefilled items the version no longer has.
 */
async function withContext(
  db: Executor,
  study: StudyRow,
  version: SurveyVersion,
  participant: { id: string; state: ParticipantState } | null,
  ctx: DomainContext,
): Promise<SurveyWithContext> {
  const env = readOnlyEnv(db, study, ctx);
  const definition = version.definition;
  const problems: PrefillProblem[] = [];
  let context: SurveyContext | null = null;
  if (participant) {
    const resolved = await resolveSurveyContext(
      definition["contextRules"],
      { state: participant.state, studyKey: study.key, variables: await readStudyVariables(db, study.key) },
      env,
    );
    context = resolved.context;
    problems.push(...resolved.problems);
  }
  const resolvedPrefill = await resolvePrefillRules(definition["prefillRules"], participant?.id ?? "", env);
  problems.push(...resolvedPrefill.problems);
  const prefill = resolvedPrefill.prefill
    ? dropPrefillsMissingFromSurvey(resolvedPrefill.prefill, definition["surveyDefinition"])
    : null;
  return { version, context, prefill, problems };
}

/**
 * The current version of a survey for the participant of a profile (the caller has checked that
 * the profile is the user's), with its context and prefill. The participant must exist, except
 * for a public survey; a survey for assigned participants must be assigned and valid now.
 *
 * @throws NotFound (study, survey version, participant); Conflict (study not active); Forbidden (not assigned).
 */
export async function getSurveyWithContextForProfile(
  db: Executor,
  input: { studyKey: string; surveyKey: string; profileId: string },
  ctx: DomainContext,
): Promise<SurveyWithContext> {
  const study = await activeStudy(db, input.studyKey);
  const version = await currentVersion(db, study.key, input.surveyKey);
  const availableFor = availableForOf(version.definition);
  const { participantId } = participantIdsInStudy(study, input.profileId);
  const row: ParticipantRow | undefined = await readParticipant(db, study.key, participantId);
  let state: ParticipantState;
  if (row) {
    assertOpenableByParticipant(availableFor, input.surveyKey, row.assignedSurveys, nowSeconds(ctx));
    state = toEngineState(row);
  } else if (availableFor === SURVEY_AVAILABLE_FOR.public) {
    // Not (yet) a participant: a public survey opens all the same, with an empty state.
    state = {
      participantId,
      currentStudySession: "",
      enteredAt: 0,
      modifiedAt: 0,
      studyStatus: "",
      flags: {},
      linkingCodes: {},
      assignedSurveys: [],
      lastSubmissions: {},
      messages: [],
    };
  } else {
    throw new NotFound(`profile is not a participant of study "${study.key}"`);
  }
  return withContext(db, study, version, { id: participantId, state }, ctx);
}

/**
 * The current version of a survey opened without an account: by a temporary participant (its id
 * is its credential: unknown ids and ids of other participants are alike not found), or by nobody
 * for a public survey (no context, and no last responses to prefill from).
 *
 * @throws NotFound (study, survey version, temporary participant); Conflict (study not active);
 *   Forbidden (the survey is not available this way).
 */
export async function getSurveyWithContextForTemporaryParticipant(
  db: Executor,
  input: { studyKey: string; surveyKey: string; temporaryParticipantId: string },
  ctx: DomainContext,
): Promise<SurveyWithContext> {
  const study = await activeStudy(db, input.studyKey);
  const version = await currentVersion(db, study.key, input.surveyKey);
  const withParticipant = input.temporaryParticipantId !== "";
  assertOpenableAnonymously(availableForOf(version.definition), input.surveyKey, withParticipant);
  if (!withParticipant) return withContext(db, study, version, null, ctx);
  const row = await readParticipant(db, study.key, input.temporaryParticipantId);
  if (row?.studyStatus !== "temporary") {
    throw new NotFound(`temporary participant not found in study "${study.key}"`);
  }
  return withContext(db, study, version, { id: row.participantId, state: toEngineState(row) }, ctx);
}
