// Which rule sets a bulk run can hand to the database, and what it hands over. That the database
// then does exactly what the engine would is the property test in
// packages/domain/test/pushdown-exactness.test.ts; here the shapes.
import { describe, expect, it } from "vitest";
import type { Expression, RowPredicate, StateWrite, StudyEvent } from "../src/index";
import { bulkBatchPlan, bulkPrefilter, bulkWritePlan, createInMemoryServices } from "../src/index";
import { NOW, call, environment, exp, num, str } from "./builders";

const CUSTOM: StudyEvent = { type: "CUSTOM", studyKey: "study1" };
const ALL: RowPredicate = { kind: "const", value: true };
const NONE: RowPredicate = { kind: "const", value: false };

const flagIs = (key: string, value: string): RowPredicate => ({
  kind: "entry",
  field: "flags",
  key,
  test: { kind: "compare", type: "string", op: "eq", value },
});

const plan = (rules: Expression[], event: StudyEvent = CUSTOM) => bulkWritePlan(rules, event, environment());

describe("bulkWritePlan", () => {
  it("hands over IFTHEN rules that set and remove flags and set the status, with their conditions", async () => {
    expect(
      await plan([
        call(
          "IFTHEN",
          exp("hasParticipantFlag", str("group"), str("g0")),
          exp("UPDATE_FLAG", str("bulk"), str("x")),
          exp("REMOVE_FLAG", str("old")),
          exp("UPDATE_STUDY_STATUS", str("exited")),
        ),
      ]),
    ).toEqual({
      rules: [
        {
          steps: [
            {
              holds: flagIs("group", "g0"),
              otherwise: { kind: "not", item: flagIs("group", "g0") },
              writes: [
                { kind: "set-flag", key: "bulk", value: "x" },
                { kind: "remove-flag", key: "old" },
                { kind: "set-status", status: "exited" },
              ],
            },
          ],
        },
      ],
    });
  });

  it("folds what is the same for the batch: the event type, a constant value turned into flag text", async () => {
    const result = await plan([
      call("IFTHEN", exp("checkEventType", str("TIMER")), exp("UPDATE_FLAG", str("tick"), str("yes"))),
      call("UPDATE_FLAG", str("count"), num(2)),
      call("UPDATE_FLAG", str("at"), exp("timestampWithOffset", num(60))),
      call("DO", exp("UPDATE_FLAG", str("a"), str("1")), str("a literal in an action position is never run")),
    ]);
    const always = (...writes: StateWrite[]) => ({ steps: [{ holds: ALL, otherwise: NONE, writes }] });
    expect(result?.rules).toEqual([
      { steps: [] },
      always({ kind: "set-flag", key: "count", value: "2.000000" }),
      always({ kind: "set-flag", key: "at", value: `${NOW + 60}.000000` }),
      always({ kind: "set-flag", key: "a", value: "1" }),
    ]);
  });

  it("decides conditions the same for the batch: one IFTHEN per event type, other events' handlers dropped", async () => {
    const result = await plan(
      [
        // a SUBMIT handler, whatever it does, never runs on a timer tick
        call(
          "IFTHEN",
          exp("checkEventType", str("SUBMIT")),
          exp("ADD_NEW_SURVEY", str("s"), num(0), num(0), str("normal")),
          exp("INIT_REPORT", str("r")),
        ),
        call(
          "IFTHEN",
          exp("checkEventType", str("TIMER")),
          exp("UPDATE_FLAG", str("ticked"), str("yes")),
          exp("IFTHEN", exp("hasParticipantFlag", str("group"), str("g0")), exp("REMOVE_FLAG", str("group"))),
          exp(
            "IF",
            exp("checkEventType", str("ENTER")),
            exp("INIT_REPORT", str("r")),
            exp("UPDATE_STUDY_STATUS", str("s")),
          ),
        ),
      ],
      { type: "TIMER", studyKey: "study1" },
    );
    expect(result?.rules).toEqual([
      { steps: [] },
      {
        steps: [
          { holds: ALL, otherwise: NONE, writes: [{ kind: "set-flag", key: "ticked", value: "yes" }] },
          {
            holds: flagIs("group", "g0"),
            otherwise: { kind: "not", item: flagIs("group", "g0") },
            writes: [{ kind: "remove-flag", key: "group" }],
          },
          { holds: ALL, otherwise: NONE, writes: [{ kind: "set-status", status: "s" }] },
        ],
      },
    ]);
  });

  it("hands over survey assignments: appended with times in whole seconds, removed by key or all", async () => {
    const result = await plan([
      call("ADD_NEW_SURVEY", str("weekly"), exp("timestampWithOffset", num(0.5)), str("not a time"), str("normal")),
      call("REMOVE_SURVEYS_BY_KEY", str("intake")),
      call("REMOVE_ALL_SURVEYS"),
    ]);
    expect(result?.rules.map((rule) => rule.steps.flatMap((step) => step.writes))).toEqual([
      [{ kind: "add-survey", survey: { surveyKey: "weekly", validFrom: NOW, validUntil: 0, category: "normal" } }],
      [{ kind: "remove-surveys", surveyKey: "intake" }],
      [{ kind: "remove-surveys" }],
    ]);
    // a time beyond what a timestamp can hold fails the action for everyone: the engine reports it
    expect(await plan([call("ADD_NEW_SURVEY", str("w"), num(1e300), num(0), str("normal"))])).toBeNull();
  });

  it("keeps a partly translatable condition as 'could be anything' where it cannot tell, for the engine", async () => {
    const result = await plan([
      call(
        "IFTHEN",
        exp(
          "or",
          exp("gt", exp("generateRandomNumber", num(0), num(9)), num(4)),
          exp("hasParticipantFlagKey", str("k")),
        ),
        exp("REMOVE_FLAG", str("k")),
      ),
    ]);
    // with the flag, `or` is true whatever the draw; without it, only evaluation can tell
    const hasKey: RowPredicate = { kind: "has-key", field: "flags", key: "k" };
    expect(result?.rules).toEqual([
      {
        steps: [{ holds: ALL, otherwise: { kind: "not", item: hasKey }, writes: [{ kind: "remove-flag", key: "k" }] }],
      },
    ]);
  });

  it.each<[string, Expression[], StudyEvent?]>([
    [
      "a condition the translation knows nothing of",
      [call("IFTHEN", exp("gt", exp("generateRandomNumber", num(0), num(9)), num(4)), exp("REMOVE_FLAG", str("k")))],
    ],
    ["an action the database cannot run", [call("REMOVE_SURVEY_BY_KEY", str("s"), str("first"))]],
    [
      "control flow under a condition that varies",
      [
        call(
          "IFTHEN",
          exp("hasStudyStatus", str("active")),
          exp("IFTHEN", exp("hasParticipantFlagKey", str("x")), exp("REMOVE_FLAG", str("k"))),
        ),
      ],
    ],
    [
      "IF with an else branch that writes, under a condition that varies",
      [
        call(
          "IF",
          exp("hasStudyStatus", str("active")),
          exp("REMOVE_FLAG", str("k")),
          exp("UPDATE_FLAG", str("k"), str("v")),
        ),
      ],
    ],
    ["a value that depends on the participant", [call("UPDATE_FLAG", str("k"), exp("getCurrentStudySession"))]],
    ["a value that fails for everyone", [call("UPDATE_FLAG", str("k"), exp("getStudyVariableInt", str("missing")))]],
    ["a number that is no number", [call("UPDATE_FLAG", str("k"), exp("div", num(1), num(0)))]],
    [
      "a condition with an effect of its own",
      [call("IFTHEN", exp("gt", exp("getNextStudyCounterValue", str("c")), num(3)), exp("REMOVE_FLAG", str("k")))],
    ],
    [
      "a SUBMIT event, which records a submission everywhere",
      [call("REMOVE_FLAG", str("k"))],
      { type: "SUBMIT", studyKey: "s" },
    ],
    ["an invalid rule set", [call("UPDATE_FLAG")]],
  ])("hands over nothing for %s", async (_, rules, event) => {
    expect(await plan(rules, event)).toBeNull();
  });

  it("gives a batch its prefilter and its plan from one translation: a study variable is read once", async () => {
    const services = createInMemoryServices({ variables: [{ key: "limit", type: "int", value: NOW }] });
    let reads = 0;
    const env = environment(
      {},
      {
        ...services,
        getStudyVariable: (key) => {
          reads++;
          return services.getStudyVariable(key);
        },
      },
    );
    const rules = [
      call(
        "IFTHEN",
        exp("lt", exp("getStudyEntryTime"), exp("getStudyVariableInt", str("limit"))),
        exp("UPDATE_FLAG", str("early"), str("yes")),
      ),
    ];
    const both = await bulkBatchPlan(rules, CUSTOM, env, { writes: true });
    expect(reads).toBe(1);
    expect(both.prefilter).toEqual(
      await bulkPrefilter(rules, CUSTOM, environment({ variables: [{ key: "limit", type: "int", value: NOW }] })),
    );
    expect(both.writes?.rules[0]?.steps[0]?.writes).toEqual([{ kind: "set-flag", key: "early", value: "yes" }]);
    // without writes, or where no row is selected, no plan
    expect((await bulkBatchPlan(rules, CUSTOM, env, { writes: false })).writes).toBeNull();
    const never = [call("IFTHEN", exp("checkEventType", str("TIMER")), exp("UPDATE_FLAG", str("k"), str("v")))];
    expect(await bulkBatchPlan(never, CUSTOM, env, { writes: true })).toEqual({ prefilter: NONE, writes: null });
  });

  it("hands over a rule set of several rules only when every rule can go", async () => {
    const flag = call("UPDATE_FLAG", str("k"), str("v"));
    expect((await plan([flag, flag]))?.rules).toHaveLength(2);
    expect(await plan([flag, call("INIT_REPORT", str("r"))])).toBeNull();
  });
});
