import type { ParticipantState, StudyEvent } from "@studyflow/engine";
import type { Executor } from "@studyflow/db";
import {
  saveParticipantState,
  sendParticipantState,
  stateWritesSchedule,
  toEngineState,
  type ParticipantRow,
} from "../participants/participant-repository";
import { runEventRules, type EventContext, type StudyForRules } from "./event-runner";
import { nowSeconds } from "../foundation/clock";
import { persistEffects, persistReports } from "./persist-outcome";
import { RulesRejectedEvent, failuresOf, recordRuleFailures, type RuleFailureRecord } from "./rule-failures";
import { hasConfidentialItems, sendResponse, storeResponse, type ArrivedResponse } from "./store-response";
import type { ParticipantIds } from "../participants/participant-ids";

/** One participant event, on a participant row the caller has locked in its transaction. */
export interface ParticipantEvent {
  study: StudyForRules;
  row: ParticipantRow;
  event: StudyEvent;
  /** Set on the state before the rules run, so they see it and may override it (LEAVE: `exited`). */
  preset?: Partial<ParticipantState>;
  /** Applied to the rules' state before it is saved (MERGE: submissions of both participants). */
  settle?: (state: ParticipantState) => ParticipantState;
  /**
   * SUBMIT: the response, stored with the new state and linked from the event's reports, and its
   * participant's ids (the confidential id owns the response's confidential items).
   */
  response?: { stored: ArrivedResponse; owner: ParticipantIds };
  /** Unix seconds written as modifiedAt; defaults to the context's clock. */
  at?: number;
}

export interface AppliedEvent {
  participant: ParticipantRow;
  /** The stored response (SUBMIT), or null when there was none or every item was confidential. */
  responseId: string | null;
  /** The rule failures of this event (also recorded, and collected in the context). */
  failures: RuleFailureRecord[];
}

/**
 * The one sequence every participant event goes through, inside the caller's transaction (see
 * inEventTransaction): the study's current rules run, their side effects are persisted, the new
 * state is saved (guarded by the version that was read), the response is stored, then the
 * reports and the failures of rules that did not succeed. A failing rule never costs the
 * participant's data: its own changes are dropped and the rest is kept, unless the study is
 * strict, when the event is rejected whole.
 */
export async function applyEvent(tx: Executor, input: ParticipantEvent, ctx: EventContext): Promise<AppliedEvent> {
  const { row, event, study } = input;
  const { result, rulesVersion } = await runEventRules(
    tx,
    study,
    { ...toEngineState(row), ...input.preset },
    event,
    ctx,
  );
  const strict = study.config.strictRules === true;
  const failures = failuresOf(
    result,
    { studyKey: study.key, participantId: row.participantId, rulesVersion, event },
    strict ? "event-rejected" : "rule-skipped",
  );
  // Strict studies take no chances: any failure, a skipped IFTHEN action too, rejects the event.
  if (strict && failures.length > 0) {
    throw new RulesRejectedEvent(failures.map((failure) => ({ ...failure, outcome: "event-rejected" })));
  }

  // Effects first: a rule that removes confidential responses acts on the ones stored before this event.
  await persistEffects(tx, study.key, result.effects, ctx.clock());
  const state = input.settle ? input.settle(result.state) : result.state;
  const at = input.at ?? nowSeconds(ctx);
  // An event that writes its state, its response and its reports (no failures to record, no
  // confidential items, no change to the message schedule, each of which has statements of its
  // own) sends them with the COMMIT: one round trip for all. Else the state and the response go
  // together, and the rest after them.
  if (
    failures.length === 0 &&
    !(input.response && hasConfidentialItems(input.response.stored)) &&
    !stateWritesSchedule(row, state)
  ) {
    // in the order they are sent: the first of them to fail is the one the event throws
    const { saved, sent } = sendParticipantState(tx, row, state, at);
    ctx.sendWithCommit(sent);
    const responseId = input.response ? input.response.stored.id : null;
    if (input.response) {
      ctx.sendWithCommit(sendResponse(tx, study.key, input.response.stored, state.currentStudySession));
    }
    ctx.sendWithCommit(
      persistReports(tx, { studyKey: study.key, eventType: event.type, responseId, reports: result.reports }),
    );
    return { participant: saved, responseId, failures };
  }
  // The new state and the response go to the server together (pipelined: one round trip); a
  // failure of either fails the event and its transaction takes both back.
  const [participant, responseId] = await settledTogether(
    saveParticipantState(tx, row, state, at),
    input.response
      ? storeResponse(tx, study.key, input.response.stored, input.response.owner, state.currentStudySession)
      : Promise.resolve(null),
  );
  await persistReports(tx, { studyKey: study.key, eventType: event.type, responseId, reports: result.reports });
  await recordRuleFailures(tx, failures, new Date(ctx.clock()));
  ctx.failures.push(...failures);
  return { participant, responseId, failures };
}

/** Both results once both settled; the first failure otherwise (never an unhandled rejection). */
async function settledTogether<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
  return [first.value, second.value];
}
