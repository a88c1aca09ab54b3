import { describe, expect, it } from "vitest";
import { goTemplateProblem, renderGoTemplate } from "../src/index";

describe("Go template subset: rendering", () => {
  const render = (source: string, data: Record<string, string> = {}) => renderGoTemplate(source, data);

  it("prints fields HTML-escaped and a missing key as nothing", () => {
    expect(render("Hello {{.name}}!", { name: "<b>Ann & Bo</b>" })).toBe("Hello &lt;b&gt;Ann &amp; Bo&lt;/b&gt;!");
    expect(render("[{{.missing}}] [{{.missing.deeper}}]")).toBe("[] []");
    expect(render(`{{"quote\\"d"}} {{'a'}} {{1.5}} {{true}}`)).toBe("quote&#34;d 97 1.5 true");
  });

  it("trims around markers and drops comments", () => {
    expect(render("a  {{- .x -}}  b", { x: "1" })).toBe("a1b");
    expect(render("a {{/* note */}} b")).toBe("a  b");
    expect(render("a \n{{- /* note */ -}}\n b")).toBe("ab");
    expect(render("{{-3}}")).toBe("-3");
  });

  it("runs if / else if / else, with, range with else, break and continue", () => {
    const choose = '{{if .a}}A{{else if eq .b "x"}}B{{else}}C{{end}}';
    expect([render(choose, { a: "1" }), render(choose, { b: "x" }), render(choose, { b: "y" })]).toEqual([
      "A",
      "B",
      "C",
    ]);
    // the template's own text is kept as written; only values are escaped
    expect(render("{{with .a}}<{{.}}>{{else}}none{{end}}", { a: "<v>" })).toBe("<&lt;v&gt;>");
    expect(render("{{with .a}}<{{.}}>{{else}}none{{end}}")).toBe("none");
    expect(render("{{range $k, $v := .}}{{$k}}={{$v}};{{end}}", { b: "2", a: "1" })).toBe("a=1;b=2;");
    expect(render("{{range .}}{{.}}{{else}}empty{{end}}")).toBe("empty");
    expect(
      render("{{range $i, $e := 5}}{{if eq $i 1}}{{continue}}{{end}}{{if eq $i 3}}{{break}}{{end}}{{$e}}{{end}}"),
    ).toBe("02");
  });

  it("declares and assigns variables, defines and calls templates, pipes into functions", () => {
    expect(render('{{$n := or .name "you"}}{{$n}} {{$n = "me"}}{{$n}}')).toBe("you me");
    expect(render('{{define "sig"}}-- {{.}}{{end}}Hi {{template "sig" .team}}', { team: "T" })).toBe("Hi -- T");
    expect(render('{{block "b" .x}}[{{.}}]{{end}}', { x: "y" })).toBe("[y]");
    expect(render('{{printf "%s/%d/%q" .a 7 .a | print}}', { a: "z" })).toBe("z/7/&#34;z&#34;");
    expect(render('{{len .a}} {{index . "a"}} {{slice .a 1 2}}', { a: "abc" })).toBe("3 abc b");
    expect(render('{{if and (ne .a "") (not .b)}}yes{{end}}', { a: "1" })).toBe("yes");
    // a function's result is a value too: escaped for HTML as html/template does
    expect(render("{{urlquery .q}}", { q: "a b&c" })).toBe("a&#43;b%26c");
    expect(render('{{if lt .n "5"}}small{{end}}', { n: "3" })).toBe("small");
  });
});

describe("Go template subset: the check before a template is stored", () => {
  it("accepts what parses and runs with an empty map", () => {
    for (const source of [
      "plain text",
      "{{.anything}}",
      "{{if .x}}{{.x.y.z}}{{end}}",
      '{{if eq .lang "de"}}Hallo{{end}}',
      "{{range .items}}{{.}}{{end}}",
      "{{`raw }} text`}}",
      '{{"a }} b"}}',
    ]) {
      expect({ source, problem: goTemplateProblem(source) }).toEqual({ source, problem: null });
    }
  });

  it("names what is wrong and where", () => {
    const cases: [string, RegExp][] = [
      ["", /empty template/],
      ["line\n{{.a", /^line 2: unclosed action/],
      ["{{end}}", /unexpected \{\{end\}\}/],
      ["{{else}}", /unexpected \{\{else\}\}/],
      ["{{if .a}}x", /\{\{if\}\} has no \{\{end\}\}/],
      ["{{if .a}}{{else}}{{else}}{{end}}", /expected end; found \{\{else\}\}/],
      ["{{range .a}}{{else if .b}}{{end}}", /else if.*in range/],
      ["{{shout .a}}", /function "shout" not defined/],
      ["{{$x}}", /undefined variable "\$x"/],
      ["{{$x = 1}}", /undefined variable "\$x"/],
      ["{{break}}", /\{\{break\}\} outside \{\{range\}\}/],
      ['{{template "nope"}}', /no such template "nope"/],
      ['{{define "a"}}{{end}}{{define "a"}}{{end}}', /defined twice/],
      ["{{template name}}", /quoted string/],
      ["{{/* open", /unclosed comment/],
      ["{{(.a}}", /unclosed left paren/],
      ["{{.a | 3}}", /non executable command/],
      ["{{len .a}}", /len of nil/],
      ['{{lt .a "b"}}', /invalid type for comparison/],
      ['{{eq 1 "1"}}', /incompatible types/],
      ["{{.a 1}}", /can't give argument to non-function/],
      ["{{#}}", /unexpected "#"/],
    ];
    for (const [source, problem] of cases) {
      expect({ source, problem: goTemplateProblem(source) }).toEqual({
        source,
        problem: expect.stringMatching(problem),
      });
    }
  });
});
