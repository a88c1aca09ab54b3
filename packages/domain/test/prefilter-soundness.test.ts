// The bulk prefilter must never pass over a participant whose evaluation does anything. fast-check
// generates rule sets shaped like those case-editor-tools studies write (IFTHEN on the event type,
// status, flags, assigned surveys and their times, submissions, messages, linking codes, study
// variables; and / or / not; nested IF with else branches; rules it cannot translate) and stored
// participants; the predicate is rendered and run on real Postgres by the bulk run's own keyset
// read, and every participant the engine changes, reports on, fails for or calls out for must be
// among the rows it returns.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStudy } from "@studyflow/domain/study-setup";
import {
  applyRules,
  bulkPrefilter,
  compileRules,
  statesEqual,
  type Expression,
  type StudyEvent,
} from "@studyflow/engine";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { batchRowToState, readBatch } from "../src/bulk/participant-batch";
import { renderPrefilter } from "../src/bulk/prefilter-sql";
import {
  DAY,
  MESSAGE_TYPES,
  NOW,
  STATUSES,
  call,
  conditionArg,
  environment,
  exp,
  flagKey,
  flagValue,
  num,
  offset,
  participantState,
  storeParticipants,
  str,
  survey,
  time,
} from "./rule-arbitraries";

const STUDY = "prefilter";

// ---- actions ---------------------------------------------------------------------------------------

const leafAction: fc.Arbitrary<Expression> = fc.oneof(
  fc
    .tuple(survey, offset, offset)
    .map(([key, from, until]) =>
      call(
        "ADD_NEW_SURVEY",
        str(key),
        exp(call("timestampWithOffset", num(from))),
        exp(call("timestampWithOffset", num(until))),
        str("normal"),
      ),
    ),
  survey.map((key) => call("REMOVE_SURVEYS_BY_KEY", str(key))),
  fc.tuple(flagKey, flagValue).map(([key, value]) => call("UPDATE_FLAG", str(key), str(value))),
  flagKey.map((key) => call("REMOVE_FLAG", str(key))),
  fc.constantFrom(...STATUSES).map((status) => call("UPDATE_STUDY_STATUS", str(status))),
  fc.constant(call("INIT_REPORT", str("r"))),
  fc.constant(call("NOTIFY_RESEARCHER", str("t"), str("k"), str("v"))),
  fc
    .constantFrom(...MESSAGE_TYPES)
    .map((type) => call("ADD_MESSAGE", str(type), exp(call("timestampWithOffset", num(DAY))))),
  fc.constantFrom(...MESSAGE_TYPES).map((type) => call("REMOVE_MESSAGES_BY_TYPE", str(type))),
  fc.constant(call("SET_LINKING_CODE", str("code"), str("c1"))),
  fc.constant(call("GET_NEXT_STUDY_COUNTER_AS_FLAG", str("c"), str("counted"))),
  fc.constant(call("UPDATE_STUDY_VARIABLE_INT", str("limit"), num(NOW - DAY))),
  // fails for every participant: an error is doing something too
  fc.constant(call("UPDATE_FLAG", str("bad"), exp(call("getStudyVariableInt", str("missing"))))),
);

const action: fc.Arbitrary<Expression> = fc.letrec<{ action: Expression }>((tie) => ({
  action: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: leafAction },
    {
      weight: 1,
      arbitrary: fc
        .tuple(conditionArg, tie("action"), fc.option(tie("action"), { nil: undefined }))
        .map(([c, then, otherwise]) => call("IF", c, exp(then), ...(otherwise ? [exp(otherwise)] : []))),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(conditionArg, fc.array(tie("action"), { maxLength: 2 }))
        .map(([c, actions]) => call("IFTHEN", c, ...actions.map(exp))),
    },
    { weight: 1, arbitrary: fc.array(tie("action"), { maxLength: 2 }).map((a) => call("DO", ...a.map(exp))) },
  ),
})).action;

/** Top-level rules: mostly IFTHEN / IF on a condition, rarely an action on its own (which selects everyone). */
const rule: fc.Arbitrary<Expression> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .tuple(conditionArg, fc.array(action, { minLength: 1, maxLength: 2 }))
      .map(([c, actions]) => call("IFTHEN", c, ...actions.map(exp))),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(conditionArg, action, fc.option(action, { nil: undefined }))
      .map(([c, then, otherwise]) => call("IF", c, exp(then), ...(otherwise ? [exp(otherwise)] : []))),
  },
  { weight: 1, arbitrary: leafAction },
);

const ruleSet = fc.array(rule, { minLength: 1, maxLength: 3 });

const scenario = fc.record({
  rules: ruleSet,
  participants: fc.array(participantState, { minLength: 1, maxLength: 24 }),
  eventType: fc.constantFrom<"TIMER" | "CUSTOM">("TIMER", "CUSTOM"),
  timeZone: fc.constantFrom("UTC", "Europe/Amsterdam", "Pacific/Chatham"),
  limit: time,
});

// ---- the property ----------------------------------------------------------------------------------

describe("the bulk prefilter on real rows", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: STUDY });
  });
  afterAll(async () => {
    await database.drop();
  });

  it("never passes over a participant whose evaluation does anything", async () => {
    let selective = 0;
    let runsWithChanges = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ rules, participants: states, eventType, timeZone, limit }) => {
        runs++;
        await storeParticipants(database.db, STUDY, states);
        const event: StudyEvent = { type: eventType, studyKey: STUDY };
        const predicate = await bulkPrefilter(rules, event, environment(timeZone, limit).env);
        const range = { studyKey: STUDY, after: "", upTo: null, limit: 1_000, lock: false };
        const selected = new Set(
          (await readBatch(database.db, { ...range, where: renderPrefilter(predicate) })).map((r) => r.participant_id),
        );

        // every stored row, as the bulk run would load it, evaluated as the bulk run would
        const compiled = compileRules(rules);
        const acting: string[] = [];
        for (const row of await readBatch(database.db, range)) {
          const before = batchRowToState(row);
          const { env, snapshot } = environment(timeZone, limit);
          const portsBefore = snapshot();
          const result = await applyRules(
            compiled,
            before,
            { ...event, participantIDForConfidentialResponses: `conf-${row.participant_id}` },
            env,
            { onRuleError: eventType === "TIMER" ? "continue" : "stop" },
          );
          const didSomething =
            !statesEqual(before, result.state) ||
            result.changedPerRule.some(Boolean) ||
            result.reports.length > 0 ||
            result.effects.length > 0 ||
            result.errors !== undefined ||
            result.skippedActions !== undefined ||
            snapshot() !== portsBefore;
          if (didSomething) acting.push(row.participant_id);
        }
        const missed = acting.filter((id) => !selected.has(id));
        expect(missed, JSON.stringify({ predicate, rules })).toEqual([]);
        if (selected.size < states.length) selective++;
        if (acting.length > 0) runsWithChanges++;
      }),
      { numRuns: 1000 },
    );
    // the property says little unless the predicates really pass rows over, and rules really act
    console.info(`prefilter: ${runs} runs, ${selective} passed rows over, ${runsWithChanges} changed some`);
    expect(selective / runs).toBeGreaterThan(0.3);
    expect(runsWithChanges / runs).toBeGreaterThan(0.3);
  }, 240_000);
});
