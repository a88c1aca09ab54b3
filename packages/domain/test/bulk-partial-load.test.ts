// A bulk run loads only the JSON columns fieldsUsedBy names and writes back only the columns that
// changed. This checks that doing so never differs from loading and writing the whole participant,
// for rule sets over every registered expression and action: a function that declares too few
// fields makes the partial run see or write back an empty column where the real one has data.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  PARTICIPANT_FIELD_COLUMNS,
  PARTICIPANT_FIELD_NAMES,
  WRITABLE_PARTICIPANT_FIELDS,
  type ParticipantFieldName,
} from "@studyflow/db";
import {
  actionNames,
  applyRules,
  compileRules,
  createDeterministicEnv,
  createInMemoryServices,
  expressionNames,
  fieldsUsedBy,
  type ApplyResult,
  type Expression,
  type ParticipantState,
  type StudyEvent,
} from "@studyflow/engine";
import { KEYS, ruleSets, ruleUsing, studyEvent } from "../../engine/test/arbitraries";
import { NOW } from "../../engine/test/builders";
import { actionSpecs, expressionSpecs } from "../../engine/src/registry";
import { batchColumns, batchRowToState, changedFields, type BatchRow } from "../src/bulk/participant-batch";

/** Runs per registered name: each run has a rule calling it, besides random ones. */
const RUNS_PER_NAME = 30;

const someTime = fc.oneof(fc.constantFrom(NOW, NOW - 3600, NOW + 86_400), fc.integer({ min: 1, max: 4e9 }));

/** The string literals of the rules, and the pairs of them that are adjacent arguments (key, value). */
function literalsIn(node: unknown, words: Set<string>, pairs: [string, string][]): void {
  if (node === null || typeof node !== "object") return;
  const { data } = node as { data?: unknown };
  if (!Array.isArray(data)) return;
  let previous: string | undefined;
  for (const arg of data as { str?: unknown; exp?: unknown }[]) {
    const word = typeof arg.str === "string" && arg.str !== "" ? arg.str : undefined;
    if (word !== undefined) words.add(word);
    if (word !== undefined && previous !== undefined) pairs.push([previous, word]);
    previous = word;
    literalsIn(arg.exp, words, pairs);
  }
}

/**
 * A participant with something in every field, so a column loaded as empty by mistake shows. Keys,
 * values and types come mostly from the rules' own literals, so that lookups such as
 * hasParticipantFlag(key, value) find something and a wrong declaration changes the outcome.
 */
function participantFor(rules: readonly Expression[]): fc.Arbitrary<ParticipantState> {
  const words = new Set(["a"]);
  const pairs: [string, string][] = [];
  for (const rule of rules) literalsIn(rule, words, pairs);
  const word = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...words) },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 5 }) },
  );
  const map = fc
    .tuple(fc.subarray(pairs), fc.dictionary(word, word, { minKeys: 1, maxKeys: 3 }))
    .map(([entries, random]) => ({ ...random, ...Object.fromEntries(entries) }));
  return fc.record({
    participantId: fc.constantFrom("p1", "p2"),
    currentStudySession: word,
    enteredAt: someTime,
    modifiedAt: someTime,
    studyStatus: fc.oneof(word, fc.constantFrom("active", "exited")),
    flags: map,
    linkingCodes: map,
    assignedSurveys: fc.array(
      fc.record({ surveyKey: word, validFrom: someTime, validUntil: someTime, category: word }),
      { minLength: 1, maxLength: 4 },
    ),
    lastSubmissions: fc.dictionary(word, someTime, { minKeys: 1, maxKeys: 3 }),
    messages: fc.array(fc.record({ id: word, type: word, scheduledFor: someTime }), { minLength: 1, maxLength: 3 }),
  });
}

/** A bulk run always has its study's key and the participant's confidential id. */
const bulkEvent = studyEvent.map((event): StudyEvent => ({
  ...event,
  studyKey: "study1",
  participantIDForConfidentialResponses: "conf",
}));

/** Random rules with one that certainly calls `name`, and a participant to match. */
function scenario(name: string) {
  return fc
    .tuple(ruleUsing(name), ruleSets, fc.nat())
    .map(([target, others, at]) => others.toSpliced(at % (others.length + 1), 0, target))
    .chain((rules) => fc.tuple(fc.constant(rules), participantFor(rules)));
}

/** An external service whose answers depend on the whole state it is sent, and which replaces it. */
function externalService(route: string, body: unknown) {
  const state = (body as { participantState: ParticipantState }).participantState;
  const seen = Object.keys(state.flags).length + Object.keys(state.linkingCodes).length + state.messages.length;
  return {
    value: seen + state.assignedSurveys.length + Object.keys(state.lastSubmissions).length,
    pState: { ...state, flags: { ...state.flags, [`external${route}`]: String(seen) }, studyStatus: "external" },
    reportsToCreate: [{ key: "external", data: [{ key: "seen", value: String(seen) }] }],
  };
}

/** A fresh environment per evaluation: counters, code lists and message ids start over. */
function environment() {
  const services = createInMemoryServices({
    counters: { c: 3 },
    codeLists: { list: ["x", "y"], a: ["z"] },
    variables: [
      { key: "a", type: "int", value: 1 },
      { key: "b", type: "boolean", value: true },
      { key: "s1", type: "string", value: "v" },
    ],
    // for each participant under several keys, so the participant id decides what a condition sees
    oldResponses: KEYS.flatMap((surveyKey, i) => [
      { key: surveyKey, participantId: "p1", arrivedAt: NOW - 100 * i, responses: [] },
      {
        key: surveyKey,
        participantId: "p2",
        arrivedAt: NOW - 50 * i,
        responses: [{ key: "weekly.Q1", response: { key: "rg", items: [{ key: "a", value: "1" }] } }],
      },
    ]),
  });
  return createDeterministicEnv({
    now: NOW * 1000,
    seed: 11,
    services: {
      ...services,
      // every service name answers, so the generated calls reach one; through JSON, as over HTTP
      callExternalService: (_name, route, body) =>
        Promise.resolve(JSON.parse(JSON.stringify(externalService(route, body))) as unknown),
    },
  });
}

/** The row as postgres.js returns it to readBatch when every column is selected: bigint as text. */
function storedRow(state: ParticipantState): BatchRow {
  const row: Record<string, unknown> = { id: "00000000-0000-4000-8000-000000000001", version: 1 };
  for (const field of PARTICIPANT_FIELD_NAMES) {
    const value = state[field];
    // the numbers of the state are the bigint columns
    row[PARTICIPANT_FIELD_COLUMNS[field].column] = typeof value === "number" ? String(value) : structuredClone(value);
  }
  return row as BatchRow;
}

/** What `select <columns>` returns of the stored row. */
function selected(row: BatchRow, fields?: ReadonlySet<ParticipantFieldName>): BatchRow {
  const columns = row as unknown as Record<string, unknown>;
  return Object.fromEntries(batchColumns(fields).map((column) => [column, columns[column]])) as BatchRow;
}

/** The stored state after writeChangedParticipants: only the columns the evaluation changed are replaced. */
function writtenBack(stored: ParticipantState, before: ParticipantState, after: ParticipantState): ParticipantState {
  const row: Record<string, unknown> = { ...stored };
  for (const field of changedFields([{ before, state: after }])) row[field] = after[field];
  return row as unknown as ParticipantState;
}

/**
 * "bulk": what readBatch loads for `fields` (every scalar column, the JSON columns in `fields`).
 * "strict": the scalar fields outside `fields` are blanked too, which holds every declaration to
 * account, not only those of the JSON fields.
 */
type Loading = { kind: "bulk" | "strict"; fields: ReadonlySet<ParticipantFieldName> } | { kind: "everything" };

function loaded(stored: ParticipantState, loading: Loading): ParticipantState {
  if (loading.kind === "everything") return batchRowToState(storedRow(stored));
  const state = batchRowToState(selected(storedRow(stored), loading.fields));
  if (loading.kind === "bulk") return state;
  const blanked: Record<string, unknown> = { ...state };
  for (const field of PARTICIPANT_FIELD_NAMES) {
    if (loading.fields.has(field)) continue;
    const { sqlType, json } = PARTICIPANT_FIELD_COLUMNS[field];
    blanked[field] = json === "array" ? [] : json === "object" ? {} : sqlType === "bigint" ? 0 : "";
  }
  return blanked as unknown as ParticipantState;
}

async function bulkRun(
  rules: Expression[],
  stored: ParticipantState,
  event: StudyEvent,
  loading: Loading,
  keepGoing: boolean,
) {
  const before = loaded(stored, loading);
  const result: ApplyResult = await applyRules(compileRules(rules), before, event, environment(), {
    onRuleError: keepGoing ? "continue" : "stop",
  });
  return {
    row: writtenBack(stored, before, result.state),
    reports: result.reports,
    effects: result.effects,
    changedPerRule: result.changedPerRule,
    errors: result.errors ?? [],
  };
}

function namesIn(node: unknown, into: Set<string>): void {
  if (node === null || typeof node !== "object") return;
  const { name, data } = node as { name?: unknown; data?: unknown };
  if (typeof name === "string") into.add(name);
  if (Array.isArray(data)) for (const arg of data) namesIn((arg as { exp?: unknown }).exp, into);
}

describe("a bulk run that loads only the fields its rules use", () => {
  it("gives the same rows, reports, effects and errors as one that loads everything", async () => {
    const names = [...expressionNames, ...actionNames];
    const seen = new Set<string>();
    for (const name of names) {
      await fc.assert(
        fc.asyncProperty(scenario(name), bulkEvent, fc.boolean(), async ([rules, participant], event, keepGoing) => {
          for (const rule of rules) namesIn(rule, seen);
          const fields = fieldsUsedBy(rules, { eventType: event.type });
          const full = await bulkRun(rules, participant, event, { kind: "everything" }, keepGoing);
          const bulk = await bulkRun(rules, participant, event, { kind: "bulk", fields }, keepGoing);
          expect(bulk, name).toEqual(full);
          const strict = await bulkRun(rules, participant, event, { kind: "strict", fields }, keepGoing);
          expect(strict, `${name}, unused scalar fields blank`).toEqual(full);
        }),
        { numRuns: RUNS_PER_NAME },
      );
    }
    // the generator must really have called every registered name, or the property proves less than it says
    expect(names.filter((name) => !seen.has(name))).toEqual([]);
  });

  it("leaves the JSON columns the rules do not use out of the select", () => {
    const rules = [
      {
        name: "UPDATE_FLAG",
        data: [
          { dtype: "str", str: "k" },
          { dtype: "str", str: "v" },
        ],
      },
    ];
    expect(batchColumns(fieldsUsedBy(rules, { eventType: "CUSTOM" }))).toEqual([
      "id",
      "version",
      "participant_id",
      "current_study_session",
      "entered_at",
      "modified_at",
      "study_status",
      "flags",
    ]);
  });

  it("can write back every field a function declares it writes", () => {
    for (const spec of [...expressionSpecs, ...actionSpecs]) {
      const { writes } = spec.participantFields;
      // "all" comes from a replaced state, of which the writable fields are written
      if (writes === "all") continue;
      for (const field of writes) expect(WRITABLE_PARTICIPANT_FIELDS, spec.name).toContain(field);
    }
  });
});
