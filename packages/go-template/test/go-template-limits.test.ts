import { describe, expect, it } from "vitest";
import { MAX_TEMPLATE_OUTPUT_BYTES, MAX_TEMPLATE_STEPS, goTemplateProblem, renderGoTemplate } from "../src/index";

/** Templates t1…tN each calling the one before twice: the work doubles with every level. */
function doublingChain(levels: number): string {
  const defined = ['{{define "t0"}}x{{end}}'];
  for (let level = 1; level <= levels; level++) {
    defined.push(`{{define "t${level}"}}{{template "t${level - 1}"}}{{template "t${level - 1}"}}{{end}}`);
  }
  return `${defined.join("")}{{template "t${levels}"}}`;
}

/** What `run` throws, or null; and how long it took. */
function timed(run: () => unknown): { error: string | null; ms: number } {
  const started = performance.now();
  try {
    run();
    return { error: null, ms: performance.now() - started };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error), ms: performance.now() - started };
  }
}

describe("Go template subset: bounded work", () => {
  it("refuses a doubling chain of 22 and 30 levels on the check before storing, without rendering it", () => {
    for (const levels of [22, 30]) {
      const check = timed(() => goTemplateProblem(doublingChain(levels)));
      expect(check.error).toBeNull();
      const problem = goTemplateProblem(doublingChain(levels));
      expect(problem).toMatch(new RegExp(`more than ${MAX_TEMPLATE_STEPS} steps.*template "t${levels}"`));
      expect(problem?.length).toBeLessThan(300);
      // seconds and hundreds of MB before; the bound is counted, not run
      expect(check.ms).toBeLessThan(2_000);
    }
    // a few levels stay well within the limit and render as before
    expect(goTemplateProblem(doublingChain(5))).toBeNull();
    expect(renderGoTemplate(doublingChain(5), {})).toBe("x".repeat(32));
  });

  it("stops a rendering past the step limit, even when only the data makes it long", () => {
    // every range runs as often as .n is long (none without .n): nothing in the source says how often
    const count = "len (print $.n)";
    const source = `{{range ${count}}}{{range ${count}}}{{range ${count}}}.{{end}}{{end}}{{end}}`;
    expect(goTemplateProblem(source)).toBeNull();
    expect(renderGoTemplate(source, { n: "abc" })).toBe(".".repeat(27));
    const huge = timed(() => renderGoTemplate(source, { n: "x".repeat(100) }));
    expect(huge.error).toMatch(new RegExp(`^stopped after ${MAX_TEMPLATE_STEPS} steps`));
    expect(huge.ms).toBeLessThan(2_000);
    // a range over a number past the limit is refused before its list is made
    const numeric = timed(() => renderGoTemplate("{{range $i := 1000000000}}{{$i}}{{end}}", {}));
    expect(numeric.error).toMatch(/^stopped after/);
    expect(numeric.ms).toBeLessThan(1_000);
    expect(goTemplateProblem("{{range 1000}}{{range 1000}}x{{end}}{{end}}")).toMatch(/more than 100000 steps/);
  });

  it("stops text that grows past the output limit, in the output or in a variable", () => {
    const doubling = '{{$x := "abcdefgh"}}{{range 40}}{{$x = print $x $x}}{{end}}{{$x}}';
    const run = timed(() => renderGoTemplate(doubling, {}));
    expect(run.error).toBe(`stopped at ${MAX_TEMPLATE_OUTPUT_BYTES} bytes of text, the most a template may produce`);
    expect(run.ms).toBeLessThan(2_000);
    expect(goTemplateProblem(doubling)).toMatch(/bytes of text/);
    expect(goTemplateProblem(`{{range 20000}}${"0123456789".repeat(10)}{{end}}`)).toMatch(/bytes of text/);
    // up to the limit is fine
    expect(renderGoTemplate("{{range 1000}}0123456789{{end}}", {})).toHaveLength(10_000);
  });

  it("refuses nesting that would run the stack out, as a template problem", () => {
    expect(goTemplateProblem("{{if 1}}".repeat(5000) + "{{end}}".repeat(5000))).toMatch(/nested deeper than 100/);
    expect(goTemplateProblem(`{{${"(".repeat(5000)}1${")".repeat(5000)}}}`)).toMatch(/parentheses nested deeper/);
    const recursive = `{{define "r"}}${"{{if 1}}".repeat(99)}{{template "r"}}${"{{end}}".repeat(99)}{{end}}{{template "r"}}`;
    expect(goTemplateProblem(recursive)).toMatch(/nests deeper than 1000 levels when rendered/);
    expect(goTemplateProblem('{{define "r"}}x{{template "r"}}{{end}}{{template "r"}}')).toMatch(
      /exceeded maximum template depth/,
    );
  });

  it("reads long runs of spaces and digits in linear time", () => {
    const spaces = timed(() => goTemplateProblem(`${" ".repeat(200_000)}x{{- .a}}`));
    expect(spaces).toEqual({ error: null, ms: expect.any(Number) });
    expect(spaces.ms).toBeLessThan(1_000);
    const digits = timed(() => renderGoTemplate(`{{printf "%${"0".repeat(200_000)}"}}`, {}));
    expect(digits.error).toBeNull();
    expect(digits.ms).toBeLessThan(1_000);
    // the trim markers and printf read as before
    expect(renderGoTemplate("a \u00a0\n {{- .x -}} \n b", { x: "1" })).toBe("a1b");
    expect(renderGoTemplate('{{printf "%05d|%-3s|%s" 42 "ab" "c"}}', {})).toBe("42|ab|c");
  });
});
