import { describe, expect, it } from "vitest";
import { actionNames, expressionNames } from "@studyflow/engine";
import { JSON_FIELDS, jsonFieldsUsedBy } from "../src/bulk/rule-field-usage";

const str = (value: string) => ({ dtype: "str", str: value });
const exp = (name: string, ...data: unknown[]) => ({ dtype: "exp", exp: { name, data } });
const rule = (name: string, ...data: unknown[]) => ({ name, data });

describe("jsonFieldsUsedBy", () => {
  it("finds the fields a rule set reads or writes through any nesting", () => {
    const rules = [
      rule("IFTHEN", exp("hasParticipantFlag", str("group"), str("g0")), exp("UPDATE_FLAG", str("bulk"), str("x"))),
      rule(
        "IF",
        exp("not", exp("hasSurveyKeyAssigned", str("weekly"))),
        exp("DO", exp("ADD_MESSAGE", str("t"), exp("timestampWithOffset"))),
      ),
    ];
    expect([...jsonFieldsUsedBy(rules)].sort()).toEqual(["assignedSurveys", "flags", "messages"]);
  });

  it("needs no JSON field for rules on status, events and reports", () => {
    expect(
      jsonFieldsUsedBy([rule("IFTHEN", exp("hasStudyStatus", str("exited")), exp("INIT_REPORT", str("r")))]).size,
    ).toBe(0);
  });

  it("loads everything for external services, which see and may replace the whole state", () => {
    expect([...jsonFieldsUsedBy([rule("EXTERNAL_EVENT_HANDLER", str("svc"))])].sort()).toEqual([...JSON_FIELDS].sort());
  });

  it("knows every name of the engine: each is mapped, field-free, or loads everything on purpose", () => {
    const loadsAll = new Set(["EXTERNAL_EVENT_HANDLER", "externalEventEval"]);
    for (const name of [...expressionNames, ...actionNames]) {
      const fields = jsonFieldsUsedBy([rule(name)]);
      if (loadsAll.has(name)) expect(fields.size, name).toBe(JSON_FIELDS.length);
      else expect(fields.size, name).toBeLessThan(JSON_FIELDS.length);
    }
  });
});
