// What the bulk prefilter and bulk write tests generate: rule conditions and stored participants
// shaped like those case-editor-tools studies write, over a small vocabulary, so that conditions
// and participants meet; and the ports a participant is evaluated with.
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { participants, type Database } from "@studyflow/db";
import {
  createDeterministicEnv,
  createInMemoryServices,
  type EngineEnv,
  type Expression,
  type ExpressionArg,
} from "@studyflow/engine";

/** 2030-03-31T01:30:00Z: an hour after the clocks moved in Europe, a day before a month starts. */
export const NOW = 1_901_151_000;
export const DAY = 86_400;

export const str = (value: string): ExpressionArg => ({ dtype: "str", str: value });
export const num = (value: number): ExpressionArg => ({ dtype: "num", num: value });
export const exp = (expression: Expression): ExpressionArg => ({ dtype: "exp", exp: expression });
export const call = (name: string, ...data: ExpressionArg[]): Expression => ({ name, data });

// ---- vocabulary: small, so that conditions and participants meet ----------------------------------

export const SURVEYS = ["weekly", "monthly", "intake"] as const;
export const FLAG_KEYS = ["group", "consent", "wave"] as const;
export const FLAG_VALUES = ["g0", "g1", "yes", ""] as const;
export const STATUSES = ["active", "exited", "paused"] as const;
export const MESSAGE_TYPES = ["reminder", "invite"] as const;
export const CODE_KEYS = ["code", "ref"] as const;
export const OFFSETS = [0, -1, 1, -60, 3_600, -DAY, DAY, -7 * DAY, 7 * DAY] as const;

export const survey = fc.constantFrom(...SURVEYS);
export const flagKey = fc.constantFrom(...FLAG_KEYS);
export const flagValue = fc.constantFrom(...FLAG_VALUES);
export const offset = fc.constantFrom(...OFFSETS);
export const time = fc.oneof(
  offset.map((o) => NOW + o),
  fc.constantFrom(-1, 0, NOW - 30 * DAY),
);
export const op = fc.constantFrom("eq", "lt", "lte", "gt", "gte");

// ---- conditions ------------------------------------------------------------------------------------

/** A number the same for every participant: now and offsets, a literal, a study variable, a calendar date. */
export const constantNumber: fc.Arbitrary<ExpressionArg> = fc.oneof(
  offset.map((o) => exp(call("timestampWithOffset", num(o)))),
  fc.tuple(offset, time).map(([o, ref]) => exp(call("timestampWithOffset", num(o), num(ref)))),
  time.map(num),
  fc.constant(exp(call("getStudyVariableInt", str("limit")))),
  fc
    .constantFrom(4, "apr")
    .map((month) => exp(call("getTsForNextStartOfMonth", typeof month === "number" ? num(month) : str(month)))),
  fc.constant(exp(call("getStudyVariableInt", str("missing")))),
);

export const timeReader: fc.Arbitrary<Expression> = fc.oneof(
  survey.map((key) => call("getSurveyKeyAssignedFrom", str(key))),
  survey.map((key) => call("getSurveyKeyAssignedUntil", str(key))),
  survey.map((key) => call("getLastSubmissionDate", str(key))),
  fc.constant(call("getStudyEntryTime")),
);

export const textReader: fc.Arbitrary<Expression> = fc.oneof(
  flagKey.map((key) => call("getParticipantFlagValue", str(key))),
  fc.constantFrom(...CODE_KEYS).map((key) => call("getLinkingCodeValue", str(key))),
  fc.constant(call("getCurrentStudySession")),
);

/** A comparison of a participant value with a constant, either way round, types sometimes mixed. */
export const comparison: fc.Arbitrary<Expression> = fc
  .oneof(
    { weight: 3, arbitrary: fc.tuple(op, timeReader, constantNumber, fc.boolean()) },
    {
      weight: 2,
      arbitrary: fc.tuple(op, textReader, fc.oneof(flagValue, fc.constantFrom("b", "s1", "c1")).map(str), fc.boolean()),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(op, fc.oneof(timeReader, textReader), fc.constantFrom(str("1"), num(1)), fc.boolean()),
    },
  )
  .map(([name, reader, constant, flip]) =>
    flip ? call(name, constant, exp(reader)) : call(name, exp(reader), constant),
  );

export const leafCondition: fc.Arbitrary<Expression> = fc.oneof(
  fc.constantFrom("TIMER", "CUSTOM").map((type) => call("checkEventType", str(type))),
  fc.constantFrom(...STATUSES).map((status) => call("hasStudyStatus", str(status))),
  fc.tuple(flagKey, flagValue).map(([key, value]) => call("hasParticipantFlag", str(key), str(value))),
  flagKey.map((key) => call("hasParticipantFlagKey", str(key))),
  survey.map((key) => call("hasSurveyKeyAssigned", str(key))),
  fc.constantFrom(...CODE_KEYS).map((key) => call("hasLinkingCode", str(key))),
  fc.constantFrom(...MESSAGE_TYPES).map((type) => call("hasMessageTypeAssigned", str(type))),
  fc
    .tuple(offset, fc.option(survey, { nil: undefined }))
    .map(([o, key]) =>
      call(
        "lastSubmissionDateOlderThan",
        exp(call("timestampWithOffset", num(o))),
        ...(key === undefined ? [] : [str(key)]),
      ),
    ),
  comparison,
  comparison,
  comparison,
  // what the prefilter cannot translate: random draws, a message time, a counter increment (an effect)
  fc.constantFrom(
    call("gt", exp(call("generateRandomNumber", num(0), num(9))), num(4)),
    call("lt", exp(call("getMessageNextTime", str("reminder"))), exp(call("timestampWithOffset", num(0)))),
    call("gt", exp(call("getNextStudyCounterValue", str("c"))), num(3)),
  ),
);

export const condition: fc.Arbitrary<Expression> = fc.letrec<{ condition: Expression }>((tie) => ({
  condition: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: leafCondition },
    {
      weight: 1,
      arbitrary: fc.array(tie("condition"), { minLength: 2, maxLength: 3 }).map((c) => call("and", ...c.map(exp))),
    },
    {
      weight: 1,
      arbitrary: fc.array(tie("condition"), { minLength: 2, maxLength: 3 }).map((c) => call("or", ...c.map(exp))),
    },
    { weight: 1, arbitrary: tie("condition").map((c) => call("not", exp(c))) },
  ),
})).condition;

/** A condition argument: mostly an expression, sometimes a literal, or a number where a boolean is usual. */
export const conditionArg: fc.Arbitrary<ExpressionArg> = fc.oneof(
  { weight: 8, arbitrary: condition.map(exp) },
  { weight: 1, arbitrary: fc.constantFrom(num(0), num(1), str("x")) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(condition, fc.constantFrom(num(0), num(2), num(-1), str("t")))
      .map(([c, extra]) => exp(call("and", exp(c), extra))),
  },
);

// ---- stored participants ---------------------------------------------------------------------------

/** Mostly what the engine writes; now and then a value of another type, which stored JSON allows. */
export const storedSurvey = fc.record({
  surveyKey: survey,
  validFrom: fc.oneof({ weight: 9, arbitrary: time }, { weight: 1, arbitrary: fc.constantFrom(null, "x") }),
  validUntil: fc.oneof({ weight: 9, arbitrary: time }, { weight: 1, arbitrary: fc.constantFrom(null, "x") }),
  category: fc.constant("normal"),
});

export const participantState = fc.record({
  studyStatus: fc.constantFrom(...STATUSES),
  currentStudySession: fc.constantFrom("", "s1", "b"),
  enteredAt: time,
  flags: fc.dictionary(
    flagKey,
    fc.oneof({ weight: 9, arbitrary: flagValue }, { weight: 1, arbitrary: fc.constantFrom<unknown>(1, null) }),
    { maxKeys: 3, noNullPrototype: true },
  ),
  linkingCodes: fc.dictionary(fc.constantFrom(...CODE_KEYS), fc.constantFrom("c1", "b", ""), {
    maxKeys: 2,
    noNullPrototype: true,
  }),
  assignedSurveys: fc.array(
    fc.oneof(
      { weight: 9, arbitrary: storedSurvey },
      // an older survey without times, as participantStateProblem accepts
      { weight: 1, arbitrary: survey.map((surveyKey) => ({ surveyKey, category: "normal" })) },
    ),
    { maxLength: 3 },
  ),
  lastSubmissions: fc.dictionary(
    survey,
    fc.oneof({ weight: 9, arbitrary: time }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "5") }),
    { maxKeys: 3, noNullPrototype: true },
  ),
  messages: fc.array(
    fc.record({
      id: fc.constantFrom("m1", "m2"),
      type: fc.constantFrom(...MESSAGE_TYPES),
      scheduledFor: time,
    }),
    { maxLength: 2 },
  ),
});

/** Fresh ports for each evaluation, seeded alike, so a participant sees what the predicate was built with. */
export function environment(timeZone: string, limit: number) {
  const services = createInMemoryServices({
    counters: { c: 2 },
    variables: [{ key: "limit", type: "int", value: limit }],
  });
  let externalCalls = 0;
  const env: EngineEnv = {
    ...createDeterministicEnv({
      now: NOW * 1000,
      seed: 3,
      services: {
        ...services,
        callExternalService: (...args) => {
          externalCalls++;
          return services.callExternalService(...args);
        },
      },
    }),
    timeZone,
  };
  return { env, snapshot: () => JSON.stringify([services.snapshot(), externalCalls]) };
}

/** The study's participants become `states`, with ids p000, p001, … in that order. */
export async function storeParticipants(db: Database, studyKey: string, states: readonly object[]): Promise<void> {
  await db.execute(sql`delete from participants where study_key = ${studyKey}`);
  await db.insert(participants).values(
    states.map((state, i) => ({
      studyKey,
      participantId: `p${String(i).padStart(3, "0")}`,
      modifiedAt: NOW,
      ...(state as Omit<typeof participants.$inferInsert, "studyKey" | "participantId" | "modifiedAt">),
    })),
  );
}
