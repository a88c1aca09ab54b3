import { describe, expect, it } from "vitest";
import { caseDateValue } from "@studyflow/presenters/case-date";

describe("a date study variable as case-backend's Go encoder writes it", () => {
  it("is RFC 3339 in UTC without a fraction for whole seconds", () => {
    expect(caseDateValue(1_793_491_200)).toBe("2026-11-01T00:00:00Z");
    expect(caseDateValue(0)).toBe("1970-01-01T00:00:00Z");
    expect(caseDateValue(-86_400)).toBe("1969-12-31T00:00:00Z");
  });

  it("keeps only the digits of a fraction that are there, as Go trims trailing zeros", () => {
    expect(caseDateValue(1_793_491_200.5)).toBe("2026-11-01T00:00:00.5Z");
    expect(caseDateValue(1_793_491_200.25)).toBe("2026-11-01T00:00:00.25Z");
    expect(caseDateValue(1_793_491_200.001)).toBe("2026-11-01T00:00:00.001Z");
  });

  it("leaves a value that is no date as it is stored", () => {
    expect(caseDateValue(8_640_000_000_001)).toBe(8_640_000_000_001);
    expect(caseDateValue(Number.NaN)).toBeNaN();
    expect(caseDateValue("not a number")).toBe("not a number");
  });
});
