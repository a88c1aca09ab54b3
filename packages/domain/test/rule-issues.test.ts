// One wording for the engine validator's issues wherever rules are refused (rule uploads, run-actions,
// the CLI's rules files, the file-upload rule): these are the messages those callers have always given.
import { describe, expect, it } from "vitest";
import { Invalid } from "@studyflow/domain/errors";
import { invalidRulesError } from "@studyflow/domain/rules";
import { validateExpression, validateRules } from "@studyflow/engine";

const issues = (count: number) => Array.from({ length: count }, (_, i) => ({ path: `rules[${i}]`, message: "bad" }));

describe("invalidRulesError", () => {
  it("names each issue's JSON path after the subject, as an Invalid", () => {
    const validation = validateRules([{ dtype: "call", name: "NO_SUCH_ACTION" }]);
    if (validation.ok) throw new Error("the validator accepted an unknown action");
    const error = invalidRulesError(validation.errors, { subject: "invalid rules" });
    expect(error).toBeInstanceOf(Invalid);
    expect(error.message).toMatch(/^invalid rules: rules\[0\]\S*: \S/);
    expect(error.message).not.toContain("more)");
  });

  it("names five issues and counts the rest unless told otherwise", () => {
    expect(invalidRulesError(issues(5), { subject: "invalid rules" }).message).toBe(
      "invalid rules: rules[0]: bad; rules[1]: bad; rules[2]: bad; rules[3]: bad; rules[4]: bad",
    );
    expect(invalidRulesError(issues(7), { subject: "invalid rules" }).message).toBe(
      "invalid rules: rules[0]: bad; rules[1]: bad; rules[2]: bad; rules[3]: bad; rules[4]: bad (and 2 more)",
    );
  });

  it("takes the number named from the caller", () => {
    const message = invalidRulesError(issues(12), { subject: "invalid rules in r.json", shown: 10 }).message;
    expect(message.startsWith("invalid rules in r.json: rules[0]: bad; ")).toBe(true);
    expect(message).toContain("rules[9]: bad (and 2 more)");
    expect(message).not.toContain("rules[10]");
  });

  it("without a subject and without counting, is the bare list of the first five", () => {
    expect(invalidRulesError(issues(7), { countHidden: false }).message).toBe(
      "rules[0]: bad; rules[1]: bad; rules[2]: bad; rules[3]: bad; rules[4]: bad",
    );
    const [issue] = validateExpression({ dtype: "call", name: "NO_SUCH_EXPRESSION" }, "expression");
    expect(issue).toBeDefined();
    expect(invalidRulesError([issue!], { countHidden: false }).message).toBe(`${issue!.path}: ${issue!.message}`);
  });
});
