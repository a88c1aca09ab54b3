import { describe, expect, it } from "vitest";
import { createDeterministicEnv, createInMemoryServices } from "./in-memory-services";

describe("createInMemoryServices", () => {
  it("counters start at 1, reset, and snapshots are copies", async () => {
    const services = createInMemoryServices({ counters: { a: 2 } });
    expect(await services.getCounterValue("b")).toBe(0);
    expect(await services.incrementCounter("b")).toBe(1);
    expect(await services.incrementCounter("a")).toBe(3);
    await services.resetCounter("a");
    expect(await services.getCounterValue("a")).toBe(0);
    const snapshot = services.snapshot();
    snapshot.counters["b"] = 99;
    expect(await services.getCounterValue("b")).toBe(1);
  });

  it("draws each code once and removes codes", async () => {
    const services = createInMemoryServices({ codeLists: { l: ["x", "y", "z"] } });
    expect(await services.drawCode("l")).toBe("x");
    await services.removeCode("l", "z");
    expect(await services.isCodePresent("l", "y")).toBe(true);
    expect(await services.drawCode("l")).toBe("y");
    expect(await services.drawCode("l")).toBeNull();
    expect(await services.drawCode("none")).toBeNull();
  });

  it("updates variables only with their declared type", async () => {
    const services = createInMemoryServices({ variables: [{ key: "v", type: "int", value: 1 }] });
    await services.updateStudyVariable("v", "int", 5);
    expect(await services.getStudyVariable("v")).toEqual({ key: "v", type: "int", value: 5 });
    await expect(services.updateStudyVariable("v", "string", "x")).rejects.toThrow('declared "int", not "string"');
    await expect(services.updateStudyVariable("w", "int", 1)).rejects.toThrow("not found");
  });

  it("finds old responses newest first with filters and a limit", async () => {
    const r = (key: string, arrivedAt: number, participantId = "p") => ({ key, arrivedAt, participantId });
    const services = createInMemoryServices({
      oldResponses: [r("a", 1), r("a", 3), r("b", 2), r("a", 4, "q"), r("a", 5)],
    });
    const found = await services.findOldResponses({
      participantId: "p",
      surveyKey: "a",
      since: 1,
      until: 5,
      limit: 10,
    });
    expect(found.map((x) => x.arrivedAt)).toEqual([3]);
    const limited = await services.findOldResponses({ participantId: "p", limit: 2 });
    expect(limited.map((x) => x.arrivedAt)).toEqual([5, 3]);
  });

  it("calls external handlers through JSON and rejects unknown services", async () => {
    const services = createInMemoryServices({
      externalServices: { s: (route, body) => ({ route, body, when: undefined }) },
    });
    expect(await services.callExternalService("s", "r", { a: 1 })).toEqual({ route: "r", body: { a: 1 } });
    await expect(services.callExternalService("t", "", null)).rejects.toThrow(
      "no external service config found with name: t",
    );
  });
});

describe("createDeterministicEnv", () => {
  it("repeats itself", () => {
    const a = createDeterministicEnv({ seed: 3, now: 1000 });
    const b = createDeterministicEnv({ seed: 3, now: 1000 });
    const draws = (env: typeof a) => [env.random(), env.random(), env.newId(), env.clock()];
    expect(draws(a)).toEqual(draws(b));
    const r = a.random();
    expect(r).toBeGreaterThanOrEqual(0);
    expect(r).toBeLessThan(1);
  });
});
