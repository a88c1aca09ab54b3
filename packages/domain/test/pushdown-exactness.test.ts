// A batch the database runs (the engine's bulkWritePlan rendered by pushdown-sql.ts) must leave
// every participant exactly as the engine would: the same flags and status, the same rows
// written, the same per-rule change counts; or, where the translation cannot tell a condition,
// write nothing and say so, so that the engine runs the batch. fast-check generates rule sets of
// flag and status rules under the conditions case-editor-tools studies write (the prefilter
// soundness test's vocabulary) and stored participants, and runs both on real Postgres.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStudy } from "@studyflow/domain/study-setup";
import {
  applyRules,
  bulkPrefilter,
  bulkWritePlan,
  compileRules,
  statesEqual,
  type Expression,
  type StudyEvent,
} from "@studyflow/engine";
import { createTestDatabase, type TestDatabase } from "@studyflow/testkit";
import { batchRowToState, readBatch } from "../src/bulk/participant-batch";
import { renderPrefilter } from "../src/bulk/prefilter-sql";
import { runPushdownBatch, singleDecidedStep } from "../src/bulk/pushdown-sql";
import {
  DAY,
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
} from "./rule-arbitraries";

const STUDY = "pushdown";
const WRITTEN_AT = NOW + 5;

/** Actions with a bulk write (flags, status, assigned surveys), their values literal or the same for the whole batch. */
const flagAction: fc.Arbitrary<Expression> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(flagKey, flagValue).map(([key, value]) => call("UPDATE_FLAG", str(key), str(value))),
  },
  { weight: 2, arbitrary: flagKey.map((key) => call("REMOVE_FLAG", str(key))) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(...STATUSES, "accountDeleted").map((status) => call("UPDATE_STUDY_STATUS", str(status))),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(survey, offset, fc.constantFrom(num(0), str("x"), num(1.5)))
      .map(([key, from, until]) =>
        call("ADD_NEW_SURVEY", str(key), exp(call("timestampWithOffset", num(from))), until, str("normal")),
      ),
  },
  { weight: 1, arbitrary: survey.map((key) => call("REMOVE_SURVEYS_BY_KEY", str(key))) },
  { weight: 1, arbitrary: fc.constant(call("REMOVE_ALL_SURVEYS")) },
  // a number becomes six-decimal text, a timestamp of the batch's instant too
  { weight: 1, arbitrary: flagKey.map((key) => call("UPDATE_FLAG", str(key), num(1))) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(flagKey, offset)
      .map(([key, o]) => call("UPDATE_FLAG", str(key), exp(call("timestampWithOffset", num(o))))),
  },
);

const actions = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: flagAction },
    { weight: 1, arbitrary: fc.array(flagAction, { maxLength: 2 }).map((a) => call("DO", ...a.map(exp))) },
  ),
  { minLength: 1, maxLength: 3 },
);

/** IFTHEN over a condition of the participant, guarding flag and status actions. */
const guarded: fc.Arbitrary<Expression> = fc
  .tuple(conditionArg, actions)
  .map(([c, a]) => call("IFTHEN", c, ...a.map(exp)));

/** A condition the same for the whole batch: the event type, sometimes wrapped. */
const eventCheck = fc.tuple(fc.constantFrom("TIMER", "CUSTOM", "SUBMIT"), fc.boolean()).map(([type, negated]) => {
  const check = call("checkEventType", str(type));
  return exp(negated ? call("not", exp(check)) : check);
});

/**
 * What studies write: one IFTHEN per event type holding the handlers of that event (flag rules,
 * IFTHENs on the participant, IF on the event) or actions the database cannot run, which must not
 * matter when the event is another.
 */
const eventHandler: fc.Arbitrary<Expression> = fc
  .tuple(
    eventCheck,
    fc.array(
      fc.oneof(
        { weight: 3, arbitrary: flagAction },
        { weight: 3, arbitrary: guarded },
        {
          weight: 1,
          arbitrary: fc
            .tuple(eventCheck, flagAction, fc.option(flagAction, { nil: undefined }))
            .map(([c, then, otherwise]) => call("IF", c, exp(then), ...(otherwise ? [exp(otherwise)] : []))),
        },
        { weight: 1, arbitrary: fc.constant(call("INIT_REPORT", str("r"))) },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  )
  .map(([check, handlers]) => call("IFTHEN", check, ...handlers.map(exp)));

/** Mostly IFTHEN over a condition or an event, sometimes an action on its own; now and then a rule the database cannot run. */
const rule: fc.Arbitrary<Expression> = fc.oneof(
  { weight: 6, arbitrary: guarded },
  { weight: 4, arbitrary: eventHandler },
  { weight: 2, arbitrary: flagAction },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      call("REMOVE_SURVEY_BY_KEY", str("weekly"), str("first")),
      call("UPDATE_FLAG", str("bad"), exp(call("getStudyVariableInt", str("missing")))),
      call(
        "IFTHEN",
        exp(call("hasStudyStatus", str("active"))),
        exp(call("IFTHEN", exp(call("hasParticipantFlagKey", str("wave"))), exp(call("REMOVE_FLAG", str("wave"))))),
      ),
    ),
  },
);

const scenario = fc.record({
  rules: fc.array(rule, { minLength: 1, maxLength: 3 }),
  participants: fc.array(participantState, { minLength: 1, maxLength: 24 }),
  eventType: fc.constantFrom<"TIMER" | "CUSTOM">("TIMER", "CUSTOM"),
  timeZone: fc.constantFrom("UTC", "Europe/Amsterdam"),
  limit: fc.constantFrom(NOW - DAY, NOW, NOW + DAY),
});

interface StoredRow {
  participant_id: string;
  flags: Record<string, unknown>;
  assigned_surveys: unknown[];
  study_status: string;
  version: number;
  modified_at: string;
}

describe("bulk writes made by the database", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await createStudy(database.db, { key: STUDY });
  });
  afterAll(async () => {
    await database.drop();
  });

  const stored = async () =>
    new Map(
      (
        await database.sql<StoredRow[]>`
          select participant_id, flags, study_status, assigned_surveys, version, modified_at from participants
          where study_key = ${STUDY} order by participant_id`
      ).map((row) => [row.participant_id, row]),
    );

  it("leave every participant as the engine would, or leave the batch to the engine", async () => {
    let runs = 0;
    let planned = 0;
    let decided = 0;
    let decidedWithChanges = 0;
    /** Plans run as one UPDATE (one step, decided for every row) rather than as the chain of steps. */
    let singleUpdate = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ rules, participants: states, eventType, timeZone, limit }) => {
        runs++;
        await storeParticipants(database.db, STUDY, states);
        const event: StudyEvent = { type: eventType, studyKey: STUDY };
        const plan = await bulkWritePlan(rules, event, environment(timeZone, limit).env);
        if (!plan) return;
        planned++;

        // what the engine does to every stored row
        const range = { studyKey: STUDY, after: "", upTo: null, limit: 1_000, lock: false };
        const compiled = compileRules(rules);
        const expected = new Map<string, { state: ReturnType<typeof batchRowToState>; changed: boolean }>();
        const changedPerRule = rules.map(() => 0);
        for (const row of await readBatch(database.db, range)) {
          const before = batchRowToState(row);
          const result = await applyRules(compiled, before, event, environment(timeZone, limit).env);
          // a plan never holds a rule that can fail, report or call out
          expect(result.errors ?? result.skippedActions ?? [], JSON.stringify(rules)).toEqual([]);
          expect(result.reports.length + result.effects.length).toBe(0);
          result.changedPerRule.forEach(
            (changed, i) => (changedPerRule[i] = (changedPerRule[i] ?? 0) + (changed ? 1 : 0)),
          );
          expected.set(row.participant_id, { state: result.state, changed: !statesEqual(before, result.state) });
        }

        const before = await stored();
        const predicate = await bulkPrefilter(rules, event, environment(timeZone, limit).env);
        const outcome = await database.db.transaction((tx) =>
          runPushdownBatch(tx, {
            ...range,
            where: renderPrefilter(predicate),
            plan,
            dryRun: false,
            nowSeconds: WRITTEN_AT,
          }),
        );
        const after = await stored();
        if (outcome.undecided) {
          expect(outcome.written).toBe(0);
          expect(after).toEqual(before);
          return;
        }
        decided++;
        if (singleDecidedStep(plan)) singleUpdate++;
        const context = JSON.stringify({ rules, plan });
        expect(outcome.changedPerRule, context).toEqual(changedPerRule);
        const changedIds = [...expected].filter(([, e]) => e.changed).map(([id]) => id);
        expect(outcome.changed, context).toBe(changedIds.length);
        expect(outcome.written, context).toBe(changedIds.length);
        if (changedIds.length > 0) decidedWithChanges++;
        for (const [id, { state, changed }] of expected) {
          const row = after.get(id) as StoredRow;
          const old = before.get(id) as StoredRow;
          expect({ id, flags: row.flags, status: row.study_status, surveys: row.assigned_surveys }, context).toEqual({
            id,
            flags: state.flags,
            status: state.studyStatus,
            surveys: state.assignedSurveys,
          });
          // written rows carry the write's time and a new version; the others are untouched
          expect([row.version, Number(row.modified_at)]).toEqual(
            changed ? [old.version + 1, WRITTEN_AT] : [old.version, Number(old.modified_at)],
          );
        }
      }),
      { numRuns: 600 },
    );
    console.info(
      `pushdown: ${runs} runs, ${planned} planned, ${decided} decided (${singleUpdate} as one UPDATE), ${decidedWithChanges} changed rows`,
    );
    // the property says little unless most plans are decided in the database and change rows
    expect(planned / runs).toBeGreaterThan(0.5);
    expect(decided / planned).toBeGreaterThan(0.5);
    expect(decidedWithChanges / planned).toBeGreaterThan(0.3);
    // both ways of running a plan are compared with the engine often enough to mean something
    expect(singleUpdate / decided).toBeGreaterThan(0.15);
    expect(singleUpdate / decided).toBeLessThan(0.85);
  }, 240_000);
});
