import { and, asc, eq, gt, inArray, lt, type SQL } from "drizzle-orm";
import {
  applyRules,
  compileRules,
  statesEqual,
  type CompiledRuleSet,
  type ParticipantState,
  type StudyEvent,
  type SurveyResponse,
} from "@studyflow/engine";
import { surveyResponses, type Database, type Executor } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { engineEnvFor, inEventTransaction, type DomainContext } from "../events/event-runner";
import { nowSeconds } from "../foundation/clock";
import { persistEffects, persistReports } from "../events/persist-outcome";
import { RulesRejectedEvent, failuresOf, recordRuleFailures } from "../events/rule-failures";
import { confidentialIdInStudy } from "../participants/participant-ids";
import {
  lockParticipant,
  saveParticipantState,
  toEngineState,
  type ParticipantRow,
} from "../participants/participant-repository";
import { getStudy, type StudyRow } from "../studies/study-repository";

/**
 * What a researcher's rule run on one participant did, as case-backend counts it: participants
 * run on (0 when the id names none), per rule the participants whose state it changed, whole
 * seconds taken.
 */
export interface ParticipantRuleRunResult {
  participantCount: number;
  changedPerRule: number[];
  durationSeconds: number;
}

export interface ParticipantRuleRunInput {
  studyKey: string;
  participantId: string;
  /** Already validated by the engine's validator. */
  rules: unknown[];
  /** The management subject running them, for the audit log. */
  actor: string;
}

/** Which stored responses a previous-responses run replays; times in Unix seconds, 0 = no bound. */
export interface PreviousResponsesSelection {
  /** Only responses to these surveys; empty: every survey. */
  surveyKeys: string[];
  /** Only responses that arrived after this time. */
  from: number;
  /** Only responses that arrived before this time. */
  to: number;
}

/**
 * Runs a researcher's rules on one participant with a CUSTOM event, whatever its status
 * (temporary and deleted accounts too, as case-backend does for one participant), in one
 * transaction: the new state (when it changed), reports, counters, messages and the audit record
 * commit together. A failing rule leaves the participant as it was and fails the run (422, the
 * failure recorded), as the bulk run-actions leave a participant whose rule failed.
 */
export async function runRulesOnParticipant(
  db: Database,
  input: ParticipantRuleRunInput,
  ctx: DomainContext,
): Promise<ParticipantRuleRunResult> {
  const started = ctx.clock();
  const compiled = compileRules(input.rules);
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getStudy(tx, input.studyKey);
    const changedPerRule = new Array<number>(compiled.ruleCount).fill(0);
    const row = await lockParticipant(tx, study.key, input.participantId);
    if (row) {
      const event: StudyEvent = {
        type: "CUSTOM",
        studyKey: study.key,
        participantIDForConfidentialResponses: confidentialIdInStudy(study, row.participantId),
      };
      const outcome = await runOnState(tx, study, row, toEngineState(row), compiled, event, eventCtx);
      outcome.changed.forEach((didChange, index) => {
        if (didChange) changedPerRule[index] = 1;
      });
      if (!statesEqual(toEngineState(row), outcome.state)) {
        await saveParticipantState(tx, row, outcome.state, nowSeconds(eventCtx));
      }
    }
    const result = {
      participantCount: row ? 1 : 0,
      changedPerRule,
      durationSeconds: Math.floor((ctx.clock() - started) / 1000),
    };
    await recordAudit(tx, {
      studyKey: study.key,
      actor: input.actor,
      action: "run-actions.participant",
      target: input.participantId,
      details: { ruleCount: compiled.ruleCount, participantCount: result.participantCount, changedPerRule },
    });
    return result;
  });
}

/**
 * Replays a participant's stored responses through a researcher's rules, as case-backend's
 * "previous responses" action does: the responses selected (surveys, arrival window) in arrival
 * order, each as a SUBMIT event on the state the previous one left, its reports dated at the
 * response's submission and linked to it. All in one transaction: a failing rule fails the run and
 * nothing of it stays. case-backend reports no per-rule counts for this action (all zeros), and
 * neither does this.
 */
export async function runRulesOnPreviousResponses(
  db: Database,
  input: ParticipantRuleRunInput & PreviousResponsesSelection,
  ctx: DomainContext,
): Promise<ParticipantRuleRunResult & { responseCount: number }> {
  const started = ctx.clock();
  const compiled = compileRules(input.rules);
  return inEventTransaction(db, ctx, async (tx, eventCtx) => {
    const study = await getStudy(tx, input.studyKey);
    const row = await lockParticipant(tx, study.key, input.participantId);
    let responseCount = 0;
    if (row) responseCount = await replayResponses(tx, study, row, compiled, input, eventCtx);
    const result = {
      participantCount: row ? 1 : 0,
      changedPerRule: new Array<number>(compiled.ruleCount).fill(0),
      durationSeconds: Math.floor((ctx.clock() - started) / 1000),
      responseCount,
    };
    await recordAudit(tx, {
      studyKey: study.key,
      actor: input.actor,
      action: "run-actions.previous-responses",
      target: input.participantId,
      details: {
        ruleCount: compiled.ruleCount,
        surveyKeys: input.surveyKeys,
        from: input.from,
        to: input.to,
        responseCount,
      },
    });
    return result;
  });
}

/**
 * Replays the selected responses of one locked participant, saving its state after each one that
 * changed it; returns how many responses were replayed. Shared by the one-participant route and
 * the bulk task over every participant.
 */
export async function replayResponses(
  tx: Executor,
  study: StudyRow,
  row: ParticipantRow,
  compiled: CompiledRuleSet,
  selection: PreviousResponsesSelection,
  ctx: DomainContext,
): Promise<number> {
  const conditions: SQL[] = [
    eq(surveyResponses.studyKey, study.key),
    eq(surveyResponses.participantId, row.participantId),
  ];
  if (selection.surveyKeys.length > 0) conditions.push(inArray(surveyResponses.key, selection.surveyKeys));
  if (selection.from > 0) conditions.push(gt(surveyResponses.arrivedAt, selection.from));
  if (selection.to > 0) conditions.push(lt(surveyResponses.arrivedAt, selection.to));
  const stored = await tx
    .select()
    .from(surveyResponses)
    .where(and(...conditions))
    .orderBy(asc(surveyResponses.arrivedAt), asc(surveyResponses.id));
  const confidentialId = confidentialIdInStudy(study, row.participantId);
  let current = row;
  for (const response of stored) {
    const event: StudyEvent = {
      type: "SUBMIT",
      studyKey: study.key,
      participantIDForConfidentialResponses: confidentialId,
      response: {
        id: response.id,
        key: response.key,
        participantId: response.participantId,
        versionId: response.versionId,
        openedAt: response.openedAt,
        submittedAt: response.submittedAt,
        arrivedAt: response.arrivedAt,
        responses: response.responses as SurveyResponse["responses"],
        context: response.context,
      },
    };
    const outcome = await runOnState(tx, study, current, toEngineState(current), compiled, event, ctx, {
      responseId: response.id,
      reportTimestamp: response.submittedAt,
    });
    if (!statesEqual(toEngineState(current), outcome.state)) {
      current = await saveParticipantState(tx, current, outcome.state, nowSeconds(ctx));
    }
  }
  return stored.length;
}

/**
 * One event's rules on a participant's state: a failing top-level rule rejects the run (its
 * failures recorded by inEventTransaction); failed IFTHEN actions are recorded and the rest kept.
 * Effects and reports are persisted; the caller saves the state.
 */
async function runOnState(
  tx: Executor,
  study: StudyRow,
  row: ParticipantRow,
  state: ParticipantState,
  compiled: CompiledRuleSet,
  event: StudyEvent,
  ctx: DomainContext,
  response?: { responseId: string; reportTimestamp: number },
): Promise<{ state: ParticipantState; changed: boolean[] }> {
  const outcome = await applyRules(compiled, state, event, engineEnvFor(tx, study, ctx), { onRuleError: "stop" });
  const on = { studyKey: study.key, participantId: row.participantId, rulesVersion: null, event };
  if (outcome.error) throw new RulesRejectedEvent(failuresOf(outcome, on, "event-rejected"));
  await persistEffects(tx, study.key, outcome.effects, ctx.clock());
  const reports = response
    ? outcome.reports.map((report) => ({ ...report, timestamp: response.reportTimestamp }))
    : outcome.reports;
  await persistReports(tx, { studyKey: study.key, eventType: event.type, responseId: response?.responseId, reports });
  if (outcome.skippedActions) {
    await recordRuleFailures(tx, failuresOf(outcome, on, "rule-skipped"), new Date(ctx.clock()));
  }
  return { state: outcome.state, changed: outcome.changedPerRule };
}
