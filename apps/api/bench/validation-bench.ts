/**
 * What validating a request costs zod-openapi's validators, in process: a survey response's body
 * (as a submit sends it) and a participant's path parameters, parsed with zod's async parse (what
 * @hono/zod-validator calls) and with the synchronous parse defineRoute serves them with
 * (parsedSynchronously), interleaved, the median of several rounds.
 *
 *   npx tsx apps/api/bench/validation-bench.ts
 */
import { submittedResponseSchema } from "../src/routes/schemas";
import { parsedSynchronously } from "../src/routes/define-route";
import { participantParams } from "../src/routes/studies/participants/participant-params";

const PARSES = 20_000;
const ROUNDS = 7;

const RESPONSE = {
  key: "weekly",
  versionId: "",
  submittedAt: 1_760_000_000,
  responses: [
    { key: "weekly.Q1", response: { key: "rg", items: [{ key: "mcg", items: [{ key: "fever" }, { key: "cough" }] }] } },
    { key: "weekly.Q2", response: { key: "rg", items: [{ key: "scg", items: [{ key: "2" }] }] } },
    { key: "weekly.Q3", response: { key: "rg", items: [{ key: "input", value: "feeling tired" }] } },
  ],
};
const PARAMS = { studyKey: "weekly-study", participantID: "p000001234" };

/** Microseconds per parse, one after the other. */
async function measure(parse: () => Promise<{ success: boolean }>): Promise<number> {
  const started = performance.now();
  for (let index = 0; index < PARSES; index++) {
    if (!(await parse()).success) throw new Error("the sample did not validate");
  }
  return ((performance.now() - started) * 1000) / PARSES;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const cases = {
  "survey response body, async parse": () => submittedResponseSchema.safeParseAsync(RESPONSE),
  "survey response body, as served": () => parsedSynchronously(submittedResponseSchema).safeParseAsync(RESPONSE),
  "participant path parameters, async parse": () => participantParams.safeParseAsync(PARAMS),
  "participant path parameters, as served": () => parsedSynchronously(participantParams).safeParseAsync(PARAMS),
};
const times = new Map<string, number[]>(Object.keys(cases).map((name) => [name, []]));
for (const parse of Object.values(cases)) await measure(parse); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, parse] of Object.entries(cases)) times.get(name)!.push(await measure(parse));
}
console.log(`request validation, µs per parse (median of ${ROUNDS} rounds of ${PARSES})`);
console.log("| schema | µs |\n|---|---:|");
for (const [name, values] of times) console.log(`| ${name} | ${median(values).toFixed(2)} |`);
