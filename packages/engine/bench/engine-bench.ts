// Evaluates a typical rule set (5 IFTHEN rules, 2–3 conditions each, flag and survey actions, a
// CUSTOM event) on 100,000 synthetic participants and prints the time per participant, next to a
// baseline measured in the same run: one structuredClone of each participant state (the least a
// copy-on-write engine could be compared with: touching every field once).
import { loadavg } from "node:os";
import type { Expression, ExpressionArg, ParticipantState, StudyEvent } from "../src/index";
import { applyRules, compileRules, createDeterministicEnv, createInMemoryServices } from "../src/index";

const PARTICIPANTS = 100_000;
const ROUNDS = 5;

const str = (s: string): ExpressionArg => ({ dtype: "str", str: s });
const num = (n: number): ExpressionArg => ({ dtype: "num", num: n });
const exp = (name: string, ...data: ExpressionArg[]): ExpressionArg => ({ dtype: "exp", exp: { name, data } });
const rule = (name: string, ...data: ExpressionArg[]): Expression => ({ name, data });

const rules: Expression[] = [
  rule(
    "IFTHEN",
    exp(
      "and",
      exp("checkEventType", str("CUSTOM")),
      exp("hasStudyStatus", str("active")),
      exp("not", exp("hasParticipantFlagKey", str("onboarded"))),
    ),
    exp("UPDATE_FLAG", str("onboarded"), str("yes")),
    exp(
      "ADD_NEW_SURVEY",
      str("intake"),
      exp("timestampWithOffset", num(0)),
      exp("timestampWithOffset", num(7 * 86400)),
      str("prio"),
    ),
  ),
  rule(
    "IFTHEN",
    exp("and", exp("checkEventType", str("CUSTOM")), exp("hasParticipantFlag", str("group"), str("A"))),
    exp("REMOVE_SURVEYS_BY_KEY", str("weekly_b")),
    exp("ADD_NEW_SURVEY", str("weekly_a"), num(0), num(0), str("normal")),
  ),
  rule(
    "IFTHEN",
    exp(
      "and",
      exp("checkEventType", str("CUSTOM")),
      exp("hasSurveyKeyAssigned", str("intake")),
      exp("lt", exp("getSurveyKeyAssignedUntil", str("intake")), exp("timestampWithOffset", num(0))),
    ),
    exp("REMOVE_SURVEY_BY_KEY", str("intake"), str("first")),
    exp("UPDATE_FLAG", str("intakeExpired"), str("true")),
  ),
  rule(
    "IFTHEN",
    exp(
      "or",
      exp("lastSubmissionDateOlderThan", exp("timestampWithOffset", num(-14 * 86400))),
      exp("hasParticipantFlag", str("reminder"), str("on")),
    ),
    exp("UPDATE_FLAG", str("reminder"), str("on")),
  ),
  rule(
    "IFTHEN",
    exp("and", exp("checkEventType", str("CUSTOM")), exp("gte", exp("getStudyEntryTime"), num(1_690_000_000))),
    exp("UPDATE_FLAG", str("cohort"), num(2023)),
    exp("REMOVE_FLAG", str("legacy")),
  ),
];

const NOW = Date.UTC(2024, 0, 1) / 1000;

function participant(i: number): ParticipantState {
  const flags: Record<string, string> = { group: i % 2 === 0 ? "A" : "B" };
  if (i % 3 === 0) flags["onboarded"] = "yes";
  if (i % 5 === 0) flags["legacy"] = "1";
  if (i % 7 === 0) flags["reminder"] = "on";
  return {
    participantId: `p${i}`,
    currentStudySession: "",
    enteredAt: NOW - (i % 400) * 86400,
    modifiedAt: NOW,
    studyStatus: i % 10 === 0 ? "exited" : "active",
    flags,
    linkingCodes: {},
    assignedSurveys:
      i % 4 === 0
        ? [{ surveyKey: "intake", validFrom: NOW - 20 * 86400, validUntil: NOW - 86400 * (i % 3), category: "prio" }]
        : [{ surveyKey: "weekly_b", validFrom: 0, validUntil: 0, category: "normal" }],
    lastSubmissions: i % 6 === 0 ? {} : { intake: NOW - (i % 30) * 86400 },
    messages: [],
  };
}

const participants = Array.from({ length: PARTICIPANTS }, (_, i) => participant(i));
const compiled = compileRules(rules);
const env = createDeterministicEnv({ services: createInMemoryServices(), now: NOW * 1000 });
const event: StudyEvent = { type: "CUSTOM", studyKey: "bench", eventKey: "" };

/** CPU time of this process, which other processes on a shared machine do not inflate. */
const cpuNs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

async function engineRound(): Promise<{ ns: number; cpu: number; changed: number }> {
  let changed = 0;
  const cpuStart = cpuNs();
  const start = process.hrtime.bigint();
  for (const p of participants) {
    const result = await applyRules(compiled, p, event, env);
    if (result.error) throw new Error(result.error.message);
    if (result.changedPerRule.includes(true)) changed++;
  }
  const ns = Number(process.hrtime.bigint() - start) / PARTICIPANTS;
  return { ns, cpu: (cpuNs() - cpuStart) / PARTICIPANTS, changed };
}

function cloneRound(): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (const p of participants) sink += structuredClone(p).assignedSurveys.length;
  if (sink < 0) console.log(sink);
  return Number(process.hrtime.bigint() - start) / PARTICIPANTS;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

await engineRound(); // warm-up: lets the JIT settle before measuring
cloneRound();
const engineTimes: number[] = [];
const engineCpuTimes: number[] = [];
const cloneTimes: number[] = [];
let changed = 0;
for (let r = 0; r < ROUNDS; r++) {
  const round = await engineRound();
  engineTimes.push(round.ns);
  engineCpuTimes.push(round.cpu);
  changed = round.changed;
  cloneTimes.push(cloneRound());
}
const engineNs = median(engineTimes);
const cloneNs = median(cloneTimes);
console.log(
  `participants: ${PARTICIPANTS}, rules: ${compiled.ruleCount}, rounds: ${ROUNDS} (median shown), changed: ${changed}`,
);
console.log(
  `engine (applyRules, compiled closures): ${engineNs.toFixed(0)} ns/participant wall, ${median(engineCpuTimes).toFixed(0)} ns CPU (load average ${loadavg()[0]?.toFixed(1)})`,
);
console.log(`baseline (structuredClone of the state): ${cloneNs.toFixed(0)} ns/participant`);
console.log(`ratio engine/baseline: ${(engineNs / cloneNs).toFixed(2)}`);
console.log(`target ≤ 2000 ns/participant (wall): ${engineNs <= 2000 ? "met" : "NOT met"}`);
