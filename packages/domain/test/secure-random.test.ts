import { describe, expect, it } from "vitest";
import { applyRules, compileRules, createInMemoryServices, normalizeParticipantState } from "@studyflow/engine";
import { newMessageId, secureRandom } from "@studyflow/domain/events";
import { call, num, onEvent, str, exp } from "@studyflow/testkit";

describe("the production random source", () => {
  it("gives values in [0, 1) that spread over the whole interval", () => {
    const draws = Array.from({ length: 20_000 }, () => secureRandom());
    expect(draws.every((value) => value >= 0 && value < 1)).toBe(true);
    // Ten equal buckets, each expected 2,000 times; 1,700 is more than six standard deviations off.
    const buckets = new Array<number>(10).fill(0);
    for (const value of draws) buckets[Math.floor(value * 10)]! += 1;
    for (const count of buckets) expect(count).toBeGreaterThan(1_700);
    // 53 bits: values are not all multiples of a coarser grid.
    expect(draws.some((value) => (value * 2 ** 48) % 1 !== 0)).toBe(true);
  });

  it("runs generateRandomNumber over a wide range in the engine, as a study's ENTER rule does", async () => {
    const rules = compileRules([
      onEvent(
        "ENTER",
        call("UPDATE_FLAG", str("group"), exp(call("generateRandomNumber", num(1), num(3)))),
        call("UPDATE_FLAG", str("wide"), exp(call("generateRandomNumber", num(-1e15), num(1e15)))),
      ),
    ]);
    const env = { services: createInMemoryServices(), clock: Date.now, random: secureRandom, newId: newMessageId };
    const groups = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const state = normalizeParticipantState({ participantId: `p${i}`, studyStatus: "active" });
      const result = await applyRules(rules, state, { type: "ENTER", studyKey: "s" }, env);
      expect(result.error).toBeUndefined();
      // Numbers become flag text the way the reference formats them ("2.000000").
      groups.add(String(Number(result.state.flags["group"])));
      const wide = Number(result.state.flags["wide"]);
      expect(Number.isInteger(wide) && Math.abs(wide) <= 1e15).toBe(true);
    }
    expect([...groups].sort()).toEqual(["1", "2", "3"]);
  });
});
