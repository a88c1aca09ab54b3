/**
 * The templates case-admin edits (e-mail and SMS templates, scheduled e-mails) are Go
 * `html/template` text. studyflow reads a subset of that language: enough to check a template as
 * case-backend checks it on upload (parse, then execute with an empty map), and to render one with
 * a flat map of string values.
 *
 * The subset:
 * - text and actions `{{ … }}`, with the trim markers `{{- ` and ` -}}` and comments `{{/* … *\/}}`;
 * - values: `.` and field chains `.name.other`, variables `$` and `$name` (declared with `:=`,
 *   assigned with `=`), string (`"…"`, `` `…` ``), number, `true`, `false` and `nil` literals,
 *   parenthesised pipelines, pipes `|`;
 * - control: `if`, `else`, `else if`, `else with`, `with`, `range` (with `$i, $v :=`), `break`,
 *   `continue`, `end`, `define`, `template`, `block`;
 * - functions: and, or, not, len, index, slice, print, printf (%s %v %d %q %%), println, html,
 *   js, urlquery, eq, ne, lt, le, gt, ge (`call` parses but fails when run: a flat string map
 *   holds no function).
 * Anything else (an unknown function, an `end` too many, an undefined variable, a missing
 * `end`) is a parse error, as it is for Go. Values printed into the output are HTML-escaped
 * whatever the context (Go escapes by context; for the texts these templates hold, HTML-escaping
 * is the same or stricter). A key missing from the map prints as nothing, as html/template does.
 */

/** A template that does not parse, or fails when run. */
export class GoTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GoTemplateError";
  }
}

/**
 * Most steps one rendering takes: nodes visited (text, actions, if/with/range/template, each
 * range iteration counted again) and function calls, a call on a long string counting one step
 * per KiB it reads. Researchers write these templates, and the worker renders a scheduled e-mail
 * once per recipient on the event loop. A template call runs the callee's whole body, so
 * templates that call the previous one twice double with every level: 22 levels are millions of
 * steps and hundreds of MB. The largest real templates (a newsletter with a few conditions and a
 * loop over the handful of values a mail has) take a few hundred steps; 100,000 leaves them a
 * wide margin and keeps a rendering to tens of milliseconds.
 */
export const MAX_TEMPLATE_STEPS = 100_000;

/**
 * Most text one rendering produces: its output plus the strings functions build on the way
 * (`print`, `printf`, `html`…), which could otherwise double a variable to gigabytes in a few
 * steps. A MiB is far more than any e-mail (mail clients clip bodies past ~100 KB) and small
 * enough for the worker to hold a batch of them.
 */
export const MAX_TEMPLATE_OUTPUT_BYTES = 1024 * 1024;

/**
 * Deepest nesting of {{if}}/{{with}}/{{range}}/{{define}} and of parentheses in one action.
 * Parsing and rendering recurse once per level; real templates nest a handful of levels, and a
 * limit keeps a template of thousands of nested {{if}} from running the stack out.
 */
export const MAX_TEMPLATE_NESTING = 100;

/**
 * Deepest chain of {{template}} calls: a template that calls itself stops there. Go allows more
 * (maxExecDepth), but over a flat map of strings no useful recursion goes this deep.
 */
const MAX_TEMPLATE_CALL_DEPTH = 100;

/**
 * Deepest nesting of bodies while rendering, template calls included: each level is a few frames
 * of recursion, and this many stays far inside Node's stack, whoever calls the renderer.
 */
const MAX_RENDER_NESTING = 1000;

/** A call on a string reads it all: one more step per this many characters. */
const CHARACTERS_PER_STEP = 1024;

type Operand =
  | { kind: "dot" }
  | { kind: "field"; base: Operand | null; names: string[] }
  | { kind: "variable"; name: string }
  | { kind: "literal"; value: unknown }
  | { kind: "function"; name: string }
  | { kind: "pipeline"; pipeline: Pipeline };

interface Command {
  args: Operand[];
}

interface Pipeline {
  declare: string[];
  assign: boolean;
  commands: Command[];
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; pipeline: Pipeline }
  | { kind: "if" | "with"; pipeline: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: "range"; pipeline: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: "template"; name: string; pipeline: Pipeline | null }
  | { kind: "break" | "continue" };

const FUNCTIONS = new Set([
  "and",
  "call",
  "html",
  "index",
  "slice",
  "js",
  "len",
  "not",
  "or",
  "print",
  "printf",
  "println",
  "urlquery",
  "eq",
  "ge",
  "gt",
  "le",
  "lt",
  "ne",
]);

/** A parsed template: its main body and the templates it defines. */
export interface GoTemplate {
  body: Node[];
  defined: Map<string, Node[]>;
}

// ---------------------------------------------------------------- lexing of one action

type Token =
  | { t: "field"; names: string[]; attached: boolean }
  | { t: "dot" }
  | { t: "var"; name: string; names: string[] }
  | { t: "ident"; name: string }
  | { t: "literal"; value: unknown }
  | { t: "(" | ")" | "|" | ":=" | "=" | "," };

function lexAction(source: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  const fieldNames = (): string[] => {
    const names: string[] = [];
    while (source[at] === "." && /[A-Za-z_]/.test(source[at + 1] ?? "")) {
      const match = /^\.([A-Za-z_][A-Za-z0-9_]*)/.exec(source.slice(at));
      if (!match) break;
      names.push(match[1] as string);
      at += match[0].length;
    }
    return names;
  };
  while (at < source.length) {
    const char = source[at] as string;
    if (/\s/.test(char)) {
      at++;
      continue;
    }
    if (char === "(" || char === ")" || char === "|" || char === ",") {
      tokens.push({ t: char });
      at++;
      continue;
    }
    if (source.startsWith(":=", at)) {
      tokens.push({ t: ":=" });
      at += 2;
      continue;
    }
    if (char === "=") {
      tokens.push({ t: "=" });
      at++;
      continue;
    }
    if (char === ".") {
      const attached = at > 0 && source[at - 1] === ")";
      const names = fieldNames();
      if (names.length > 0) tokens.push({ t: "field", names, attached });
      else {
        if (/[0-9]/.test(source[at + 1] ?? "")) throw new GoTemplateError(`bad number in action`);
        tokens.push({ t: "dot" });
        at++;
      }
      continue;
    }
    if (char === "$") {
      const match = /^\$[A-Za-z0-9_]*/.exec(source.slice(at)) as RegExpExecArray;
      at += match[0].length;
      tokens.push({ t: "var", name: match[0], names: fieldNames() });
      continue;
    }
    if (char === '"') {
      let end = at + 1;
      while (end < source.length && source[end] !== '"') end += source[end] === "\\" ? 2 : 1;
      if (end >= source.length) throw new GoTemplateError("unterminated quoted string");
      let value: unknown;
      try {
        value = JSON.parse(source.slice(at, end + 1));
      } catch {
        throw new GoTemplateError(`bad quoted string ${source.slice(at, end + 1)}`);
      }
      tokens.push({ t: "literal", value });
      at = end + 1;
      continue;
    }
    if (char === "`") {
      const end = source.indexOf("`", at + 1);
      if (end < 0) throw new GoTemplateError("unterminated raw quoted string");
      tokens.push({ t: "literal", value: source.slice(at + 1, end) });
      at = end + 1;
      continue;
    }
    if (char === "'") {
      const match = /^'(\\.|[^\\'])'/.exec(source.slice(at));
      if (!match) throw new GoTemplateError("bad character constant");
      tokens.push({ t: "literal", value: (match[1] as string).replace(/^\\/, "").codePointAt(0) });
      at += match[0].length;
      continue;
    }
    const number = /^[-+]?(0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?)/.exec(source.slice(at));
    if (number && /[-+0-9]/.test(char)) {
      const value = Number(number[0].replaceAll("_", ""));
      if (Number.isNaN(value)) throw new GoTemplateError(`bad number syntax: ${number[0]}`);
      tokens.push({ t: "literal", value });
      at += number[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(at));
    if (ident) {
      const name = ident[0];
      at += name.length;
      if (name === "true" || name === "false") tokens.push({ t: "literal", value: name === "true" });
      else if (name === "nil") tokens.push({ t: "literal", value: null });
      else tokens.push({ t: "ident", name });
      continue;
    }
    throw new GoTemplateError(`unexpected ${JSON.stringify(char)} in action`);
  }
  return tokens;
}

// ---------------------------------------------------------------- parsing

interface Frame {
  kind: "root" | "if" | "with" | "range" | "define";
  node?: Extract<Node, { kind: "if" | "with" | "range" }>;
  name?: string;
  /** Where new nodes go: the body, or the else branch. */
  into: Node[];
  /** `else if`/`else with` open a nested node that the same `end` closes. */
  chained: number;
  variables: Set<string>;
  inRange: boolean;
}

class PipelineParser {
  private at = 0;
  private parens = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly variables: Set<string>,
  ) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }

  pipeline(allowDeclare: boolean, context: string): Pipeline {
    const declare: string[] = [];
    let assign = false;
    if (allowDeclare) {
      const first = this.tokens[0];
      const second = this.tokens[1];
      const third = this.tokens[2];
      const fourth = this.tokens[3];
      if (first?.t === "var" && first.names.length === 0 && (second?.t === ":=" || second?.t === "=")) {
        declare.push(first.name);
        assign = second.t === "=";
        this.at = 2;
      } else if (
        first?.t === "var" &&
        second?.t === "," &&
        third?.t === "var" &&
        (fourth?.t === ":=" || fourth?.t === "=")
      ) {
        declare.push(first.name, third.name);
        assign = fourth.t === "=";
        this.at = 4;
      }
    }
    if (assign) for (const name of declare) this.checkVariable(name);
    const commands = this.commands(context);
    for (const name of declare) this.variables.add(name);
    return { declare, assign, commands };
  }

  private checkVariable(name: string) {
    if (!this.variables.has(name)) throw new GoTemplateError(`undefined variable "${name}"`);
  }

  private commands(context: string): Command[] {
    const commands: Command[] = [];
    for (;;) {
      const args: Operand[] = [];
      while (!this.done()) {
        const token = this.tokens[this.at] as Token;
        if (token.t === "|" || token.t === ")") break;
        args.push(this.operand());
      }
      if (args.length === 0) throw new GoTemplateError(`missing value for ${context}`);
      commands.push({ args });
      const next = this.tokens[this.at];
      if (next?.t !== "|") break;
      this.at++;
    }
    for (const command of commands.slice(1)) {
      const head = command.args[0] as Operand;
      if (head.kind === "literal") throw new GoTemplateError(`non executable command in pipeline stage`);
    }
    return commands;
  }

  private operand(): Operand {
    const token = this.tokens[this.at++] as Token;
    let operand: Operand;
    switch (token.t) {
      case "dot":
        operand = { kind: "dot" };
        break;
      case "field":
        operand = { kind: "field", base: null, names: token.names };
        break;
      case "var":
        this.checkVariable(token.name);
        operand =
          token.names.length > 0
            ? { kind: "field", base: { kind: "variable", name: token.name }, names: token.names }
            : { kind: "variable", name: token.name };
        break;
      case "literal":
        operand = { kind: "literal", value: token.value };
        break;
      case "ident":
        if (!FUNCTIONS.has(token.name)) throw new GoTemplateError(`function "${token.name}" not defined`);
        operand = { kind: "function", name: token.name };
        break;
      case "(": {
        const inner = this.pipelineUntilParen();
        operand = { kind: "pipeline", pipeline: inner };
        break;
      }
      default:
        throw new GoTemplateError(`unexpected "${token.t}" in operand`);
    }
    const next = this.tokens[this.at];
    if (next?.t === "field" && next.attached && operand.kind === "pipeline") {
      this.at++;
      return { kind: "field", base: operand, names: next.names };
    }
    return operand;
  }

  private pipelineUntilParen(): Pipeline {
    if (++this.parens > MAX_TEMPLATE_NESTING) {
      throw new GoTemplateError(`parentheses nested deeper than ${MAX_TEMPLATE_NESTING} levels`);
    }
    const commands = this.commands("parenthesized pipeline");
    this.parens--;
    if (this.tokens[this.at]?.t !== ")") throw new GoTemplateError("unclosed left paren");
    this.at++;
    return { declare: [], assign: false, commands };
  }
}

function parsePipeline(tokens: Token[], variables: Set<string>, context: string, allowDeclare = true): Pipeline {
  const parser = new PipelineParser(tokens, variables);
  const pipeline = parser.pipeline(allowDeclare, context);
  if (!parser.done()) throw new GoTemplateError(`unexpected token in ${context}`);
  return pipeline;
}

function templateName(tokens: Token[], keyword: string): { name: string; rest: Token[] } {
  const first = tokens[0];
  if (first?.t !== "literal" || typeof first.value !== "string") {
    throw new GoTemplateError(`unexpected name in ${keyword}: a quoted string is needed`);
  }
  return { name: first.value, rest: tokens.slice(1) };
}

/**
 * The line of an offset, for messages. Offsets only grow while parsing: counting on from the
 * last one keeps a long template with many actions linear rather than quadratic.
 */
function lineCounter(source: string): (offset: number) => number {
  let counted = 0;
  let line = 1;
  return (offset) => {
    for (; counted < offset; counted++) if (source.charCodeAt(counted) === 10) line++;
    return line;
  };
}

/** Whether the action starting at an offset is a comment (`{{/*`, `{{- /*`). */
const COMMENT_START = /\s*\/\*/y;

/** Parses a template, or throws GoTemplateError saying what is wrong and on which line. */
export function parseGoTemplate(source: string): GoTemplate {
  const defined = new Map<string, Node[]>();
  const root: Frame = { kind: "root", into: [], chained: 0, variables: new Set(["$"]), inRange: false };
  const stack: Frame[] = [root];
  const top = () => stack[stack.length - 1] as Frame;
  const lineOf = lineCounter(source);
  let at = 0;
  let trimNext = false;
  while (at <= source.length) {
    const open = source.indexOf("{{", at);
    let text = source.slice(at, open < 0 ? source.length : open);
    // trimStart/trimEnd strip what \s matches, in linear time (a /\s+$/ retries from every space)
    if (trimNext) text = text.trimStart();
    trimNext = false;
    if (open < 0) {
      if (text) top().into.push({ kind: "text", text });
      break;
    }
    const trimLeft = /^\{\{-[ \t\r\n]/.test(source.slice(open, open + 4));
    if (trimLeft) text = text.trimEnd();
    if (text) top().into.push({ kind: "text", text });
    const innerStart = open + (trimLeft ? 3 : 2);
    const line = lineOf(open);
    let inner: string;
    let close: number;
    COMMENT_START.lastIndex = innerStart;
    if (COMMENT_START.test(source)) {
      const commentStart = source.indexOf("/*", innerStart);
      const commentEnd = source.indexOf("*/", commentStart + 2);
      if (commentEnd < 0) throw new GoTemplateError(`line ${line}: unclosed comment`);
      const rest = /^(\s-)?\}\}/.exec(source.slice(commentEnd + 2));
      if (!rest) throw new GoTemplateError(`line ${line}: comment ends before closing delimiter`);
      trimNext = rest[1] !== undefined;
      at = commentEnd + 2 + rest[0].length;
      continue;
    }
    close = -1;
    // the closing "}}" outside a quoted string
    for (let scan = innerStart; scan < source.length; scan++) {
      const char = source[scan];
      if (char === '"') {
        scan++;
        while (scan < source.length && source[scan] !== '"' && source[scan] !== "\n") {
          scan += source[scan] === "\\" ? 2 : 1;
        }
        continue;
      }
      if (char === "`") {
        const end = source.indexOf("`", scan + 1);
        if (end < 0) break;
        scan = end;
        continue;
      }
      if (source.startsWith("}}", scan)) {
        close = scan;
        break;
      }
    }
    if (close < 0) throw new GoTemplateError(`line ${line}: unclosed action`);
    inner = source.slice(innerStart, close);
    if (/[ \t\r\n]-$/.test(inner)) {
      trimNext = true;
      inner = inner.slice(0, -2);
    }
    at = close + 2;
    try {
      handleAction(inner, stack, defined);
    } catch (error) {
      if (error instanceof GoTemplateError) throw new GoTemplateError(`line ${line}: ${error.message}`);
      throw error;
    }
  }
  if (stack.length > 1) {
    throw new GoTemplateError(`unexpected EOF: {{${top().kind}}} has no {{end}}`);
  }
  return { body: root.into, defined };
}

function handleAction(inner: string, stack: Frame[], defined: Map<string, Node[]>) {
  const frame = stack[stack.length - 1] as Frame;
  const tokens = lexAction(inner);
  if (tokens.length === 0) throw new GoTemplateError("missing value for command");
  const first = tokens[0] as Token;
  const keyword = first.t === "ident" ? first.name : "";
  const rest = tokens.slice(1);
  const scoped = (kind: Frame["kind"], node?: Frame["node"], into: Node[] = []): Frame => ({
    kind,
    ...(node ? { node } : {}),
    into,
    chained: 0,
    variables: new Set(frame.variables),
    inRange: kind === "range" ? true : kind === "define" ? false : frame.inRange,
  });
  switch (keyword) {
    case "if":
    case "with":
    case "range": {
      const pipeline = parsePipeline(rest, new Set(frame.variables), keyword);
      if (stack.length > MAX_TEMPLATE_NESTING) {
        throw new GoTemplateError(`{{${keyword}}} nested deeper than ${MAX_TEMPLATE_NESTING} levels`);
      }
      const node = { kind: keyword, pipeline, body: [], otherwise: [] } as Extract<
        Node,
        { kind: "if" | "with" | "range" }
      >;
      frame.into.push(node);
      const child = scoped(keyword, node, node.body);
      for (const name of pipeline.declare) child.variables.add(name);
      stack.push(child);
      return;
    }
    case "else": {
      if (!frame.node) throw new GoTemplateError("unexpected {{else}}");
      const chainedKind = rest[0]?.t === "ident" ? rest[0].name : "";
      if (chainedKind === "if" || chainedKind === "with") {
        if (frame.kind === "range") throw new GoTemplateError(`unexpected {{else ${chainedKind}}} in range`);
        const pipeline = parsePipeline(rest.slice(1), new Set(frame.variables), chainedKind);
        const node = { kind: chainedKind, pipeline, body: [], otherwise: [] } as Extract<Node, { kind: "if" | "with" }>;
        // each else-if is one more level of the tree that rendering recurses into
        if (stack.length + frame.chained > MAX_TEMPLATE_NESTING) {
          throw new GoTemplateError(`{{else ${chainedKind}}} chained more than ${MAX_TEMPLATE_NESTING} levels deep`);
        }
        frame.node.otherwise.push(node);
        for (const name of pipeline.declare) frame.variables.add(name);
        frame.node = node;
        frame.into = node.body;
        frame.chained++;
        return;
      }
      if (rest.length > 0) throw new GoTemplateError("unexpected tokens after else");
      if (frame.into === frame.node.otherwise) throw new GoTemplateError("expected end; found {{else}}");
      frame.into = frame.node.otherwise;
      return;
    }
    case "end":
      if (rest.length > 0) throw new GoTemplateError("unexpected tokens after end");
      if (stack.length === 1) throw new GoTemplateError("unexpected {{end}}");
      stack.pop();
      if (frame.kind === "define") defined.set(frame.name as string, frame.into);
      return;
    case "break":
    case "continue":
      if (!frame.inRange) throw new GoTemplateError(`{{${keyword}}} outside {{range}}`);
      if (rest.length > 0) throw new GoTemplateError(`unexpected tokens after ${keyword}`);
      frame.into.push({ kind: keyword });
      return;
    case "define": {
      if (stack.length > 1) throw new GoTemplateError("{{define}} inside another action");
      const { name, rest: after } = templateName(rest, "define");
      if (after.length > 0) throw new GoTemplateError("unexpected tokens after define name");
      if (defined.has(name)) throw new GoTemplateError(`template "${name}" defined twice`);
      const child = scoped("define", undefined, []);
      child.name = name;
      child.variables = new Set(["$"]);
      stack.push(child);
      return;
    }
    case "template":
    case "block": {
      const { name, rest: after } = templateName(rest, keyword);
      const pipeline = after.length > 0 ? parsePipeline(after, new Set(frame.variables), keyword, false) : null;
      if (keyword === "block" && pipeline === null) throw new GoTemplateError("block needs a pipeline");
      frame.into.push({ kind: "template", name, pipeline });
      if (keyword === "block") {
        if (defined.has(name)) throw new GoTemplateError(`template "${name}" defined twice`);
        const child = scoped("define", undefined, []);
        child.name = name;
        child.variables = new Set(["$"]);
        stack.push(child);
      }
      return;
    }
    default: {
      const pipeline = parsePipeline(tokens, frame.variables, "command");
      frame.into.push({ kind: "action", pipeline });
    }
  }
}

// ---------------------------------------------------------------- execution

/** Go's "no value": a key missing from the map. */
const NO_VALUE = Symbol("no value");

class Scope {
  constructor(
    readonly variables: Map<string, unknown>,
    readonly parent: Scope | null,
  ) {}
  /** The variables of the innermost scope that declares `name`. */
  private holder(name: string): Map<string, unknown> {
    if (this.variables.has(name)) return this.variables;
    if (this.parent) return this.parent.holder(name);
    throw new GoTemplateError(`undefined variable "${name}"`);
  }
  get(name: string): unknown {
    return this.holder(name).get(name);
  }
  set(name: string, value: unknown) {
    this.holder(name).set(name, value);
  }
}

/** A `{{break}}` or `{{continue}}` on its way to its range. */
class LoopSignal extends Error {
  constructor(readonly kind: "break" | "continue") {
    super(kind);
  }
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&#34;",
  "'": "&#39;",
  "+": "&#43;",
  "\0": "\uFFFD",
};

function htmlEscape(text: string): string {
  return text.replace(/[&<>"'+\0]/g, (char) => HTML_ESCAPES[char] ?? char);
}

function isTrue(value: unknown): boolean {
  if (value === NO_VALUE || value === null || value === undefined) return false;
  if (typeof value === "string") return value !== "";
  if (typeof value === "number") return value !== 0;
  if (typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

function printed(value: unknown): string {
  if (value === NO_VALUE || value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(printed).join(" ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    return `map[${entries.map(([key, item]) => `${key}:${printed(item)}`).join(" ")}]`;
  }
  return typeof value === "bigint" ? value.toString() : "";
}

function goQuote(text: string): string {
  return JSON.stringify(text);
}

function sprintf(format: string, args: unknown[]): string {
  let index = 0;
  // flags, then a width that cannot start with 0: a "0" belongs to one part only, so a long run
  // of digits is read once instead of split every way
  return format.replace(/%([-+# 0]*(?:[1-9]\d*)?(?:\.\d+)?)?([a-zA-Z%])/g, (_, _flags, verb: string) => {
    if (verb === "%") return "%";
    if (index >= args.length) return `%!${verb}(MISSING)`;
    const value = args[index++];
    switch (verb) {
      case "s":
      case "v":
        return printed(value);
      case "d":
        return typeof value === "number" ? String(Math.trunc(value)) : `%!d(${printed(value)})`;
      case "q":
        return goQuote(printed(value));
      default:
        return printed(value);
    }
  });
}

function basicKind(value: unknown): string {
  if (value === NO_VALUE || value === undefined) throw new GoTemplateError("invalid type for comparison");
  if (value === null) return "nil";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return typeof value;
  throw new GoTemplateError("invalid type for comparison");
}

/**
 * Go's eq of two values: a missing value equals nothing (and is no error, as Go compares it);
 * values of different kinds are an error.
 */
function equal(left: unknown, right: unknown): boolean {
  if (left === NO_VALUE || right === NO_VALUE) return left === right;
  if (basicKind(left) !== basicKind(right)) throw new GoTemplateError("incompatible types for comparison");
  return left === right;
}

function compareOrdered(name: string, left: unknown, right: unknown): number {
  const kind = basicKind(left);
  if (kind !== basicKind(right) || kind === "nil" || kind === "boolean") {
    throw new GoTemplateError(`${name}: incompatible types for comparison`);
  }
  return (left as number | string) < (right as number | string)
    ? -1
    : (left as number | string) > (right as number | string)
      ? 1
      : 0;
}

function lengthOf(value: unknown): number {
  if (typeof value === "string") return new TextEncoder().encode(value).length;
  if (Array.isArray(value)) return value.length;
  if (value !== null && typeof value === "object") return Object.keys(value).length;
  throw new GoTemplateError(`len of ${value === NO_VALUE || value === null ? "nil" : "type " + typeof value}`);
}

function indexInto(value: unknown, keys: unknown[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === NO_VALUE || current === null) throw new GoTemplateError("index of untyped nil");
    if (typeof current === "string" || Array.isArray(current)) {
      if (typeof key !== "number" || !Number.isInteger(key) || key < 0 || key >= current.length) {
        throw new GoTemplateError(`error calling index: index out of range: ${printed(key)}`);
      }
      current = typeof current === "string" ? new TextEncoder().encode(current)[key] : current[key];
    } else if (typeof current === "object") {
      if (typeof key !== "string")
        throw new GoTemplateError("error calling index: value has type int; should be string");
      current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : "";
    } else {
      throw new GoTemplateError(`can't index item of type ${typeof current}`);
    }
  }
  return current;
}

function callFunction(name: string, args: unknown[], argCount: number): unknown {
  const needs = (count: number) => {
    if (argCount !== count)
      throw new GoTemplateError(`wrong number of args for ${name}: want ${count} got ${argCount}`);
  };
  switch (name) {
    case "and":
      if (argCount < 1) throw new GoTemplateError("wrong number of args for and: want at least 1 got 0");
      return args.find((value) => !isTrue(value)) ?? args[args.length - 1];
    case "or":
      if (argCount < 1) throw new GoTemplateError("wrong number of args for or: want at least 1 got 0");
      return args.find((value) => isTrue(value)) ?? args[args.length - 1];
    case "not":
      needs(1);
      return !isTrue(args[0]);
    case "len":
      needs(1);
      return lengthOf(args[0]);
    case "index":
      if (argCount < 1) throw new GoTemplateError("wrong number of args for index: want at least 1 got 0");
      return indexInto(args[0], args.slice(1));
    case "slice": {
      if (argCount < 1) throw new GoTemplateError("wrong number of args for slice: want at least 1 got 0");
      const [value, from = 0, to] = args;
      if (typeof value !== "string" && !Array.isArray(value)) throw new GoTemplateError("can't slice item");
      const end = to ?? value.length;
      if (typeof from !== "number" || typeof end !== "number" || from < 0 || end > value.length || from > end) {
        throw new GoTemplateError("error calling slice: index out of range");
      }
      return value.slice(from, end);
    }
    case "print":
      return args.map(printed).join("");
    case "println":
      return `${args.map(printed).join(" ")}\n`;
    case "printf": {
      if (argCount < 1) throw new GoTemplateError("wrong number of args for printf: want at least 1 got 0");
      return sprintf(printed(args[0]), args.slice(1));
    }
    case "html":
      return htmlEscape(args.map(printed).join(""));
    case "js":
      return args
        .map(printed)
        .join("")
        .replace(
          /[\\'"<>&=\n\r\t`]/g,
          (char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
        );
    case "urlquery":
      return encodeURIComponent(args.map(printed).join("")).replace(/%20/g, "+");
    case "eq": {
      if (argCount < 2) throw new GoTemplateError("missing argument for comparison");
      return args.slice(1).some((other) => equal(args[0], other));
    }
    case "ne":
      needs(2);
      return !equal(args[0], args[1]);
    case "lt":
      needs(2);
      return compareOrdered(name, args[0], args[1]) < 0;
    case "le":
      needs(2);
      return compareOrdered(name, args[0], args[1]) <= 0;
    case "gt":
      needs(2);
      return compareOrdered(name, args[0], args[1]) > 0;
    case "ge":
      needs(2);
      return compareOrdered(name, args[0], args[1]) >= 0;
    default:
      throw new GoTemplateError(`error calling ${name}: not a function of this template's data`);
  }
}

/** Functions that build a new string from their arguments: what they make counts as output. */
const TEXT_BUILDERS = new Set(["html", "js", "print", "printf", "println", "urlquery"]);

function stepLimitError(): GoTemplateError {
  return new GoTemplateError(
    `stopped after ${MAX_TEMPLATE_STEPS} steps, the most a template may take: it does too much work ` +
      "(templates that call other templates several times, or a range over many items)",
  );
}

function outputLimitError(): GoTemplateError {
  return new GoTemplateError(`stopped at ${MAX_TEMPLATE_OUTPUT_BYTES} bytes of text, the most a template may produce`);
}

/** Characters a function reads from its arguments (strings only: the data holds nothing bigger). */
function textLength(args: readonly unknown[]): number {
  let length = 0;
  for (const arg of args) if (typeof arg === "string") length += arg.length;
  return length;
}

class Execution {
  private depth = 0;
  private nesting = 0;
  private steps = 0;
  private bytes = 0;
  constructor(
    private readonly template: GoTemplate,
    private readonly output: string[],
  ) {}

  private step(count = 1) {
    this.steps += count;
    if (this.steps > MAX_TEMPLATE_STEPS) throw stepLimitError();
  }

  /**
   * Refuses before building a text of `length` characters (a UTF-8 byte at least each) that
   * would not fit: the check comes before the allocation, not after.
   */
  private ensureRoom(length: number) {
    if (this.bytes + length > MAX_TEMPLATE_OUTPUT_BYTES) throw outputLimitError();
  }

  private produce(text: string) {
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > MAX_TEMPLATE_OUTPUT_BYTES) throw outputLimitError();
  }

  private emit(text: string) {
    this.produce(text);
    this.output.push(text);
  }

  run(nodes: Node[], dot: unknown, scope: Scope): void {
    // nesting within a template and template calls multiply: 100 levels of {{if}} in a template
    // that calls itself 100 times deep would run the stack out
    if (++this.nesting > MAX_RENDER_NESTING) {
      throw new GoTemplateError(`nests deeper than ${MAX_RENDER_NESTING} levels when rendered`);
    }
    try {
      this.runNodes(nodes, dot, scope);
    } finally {
      this.nesting--;
    }
  }

  private runNodes(nodes: Node[], dot: unknown, scope: Scope): void {
    for (const node of nodes) {
      this.step();
      switch (node.kind) {
        case "text":
          this.emit(node.text);
          break;
        case "action": {
          const value = this.pipeline(node.pipeline, dot, scope);
          if (node.pipeline.declare.length === 0) {
            const text = printed(value);
            this.ensureRoom(text.length);
            this.emit(htmlEscape(text));
          }
          break;
        }
        case "if":
        case "with": {
          const inner = new Scope(new Map(), scope);
          const value = this.pipeline(node.pipeline, dot, inner);
          if (isTrue(value)) this.run(node.body, node.kind === "with" ? value : dot, inner);
          else this.run(node.otherwise, dot, inner);
          break;
        }
        case "range":
          this.range(node, dot, scope);
          break;
        case "template": {
          const body = this.template.defined.get(node.name);
          if (!body) throw new GoTemplateError(`no such template "${node.name}"`);
          if (++this.depth > MAX_TEMPLATE_CALL_DEPTH) throw new GoTemplateError("exceeded maximum template depth");
          const value = node.pipeline ? this.pipeline(node.pipeline, dot, scope) : null;
          this.run(body, value, new Scope(new Map([["$", value]]), null));
          this.depth--;
          break;
        }
        case "break":
        case "continue":
          throw new LoopSignal(node.kind);
      }
    }
  }

  private range(node: Extract<Node, { kind: "range" }>, dot: unknown, scope: Scope) {
    const inner = new Scope(new Map(), scope);
    const [keyName, valueName] = node.pipeline.declare;
    const value = this.pipeline({ ...node.pipeline, declare: [] }, dot, inner);
    let entries: [unknown, unknown][];
    if (value === NO_VALUE || value === null) entries = [];
    else if (Array.isArray(value)) entries = value.map((item, index) => [index, item]);
    else if (typeof value === "number" && Number.isInteger(value)) {
      // every iteration is a step: a count past the steps left is refused before the list is made
      if (value > MAX_TEMPLATE_STEPS - this.steps) throw stepLimitError();
      entries = Array.from({ length: Math.max(0, value) }, (_, index) => [index, index]);
    } else if (typeof value === "object") {
      entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    } else throw new GoTemplateError(`range can't iterate over ${printed(value)}`);
    if (entries.length === 0) {
      this.run(node.otherwise, dot, inner);
      return;
    }
    for (const [key, item] of entries) {
      this.step();
      const loop = new Scope(new Map(), inner);
      if (valueName !== undefined) {
        loop.variables.set(keyName as string, key);
        loop.variables.set(valueName, item);
      } else if (keyName !== undefined) loop.variables.set(keyName, item);
      try {
        this.run(node.body, item, loop);
      } catch (signal) {
        if (!(signal instanceof LoopSignal)) throw signal;
        if (signal.kind === "break") break;
      }
    }
  }

  private pipeline(pipeline: Pipeline, dot: unknown, scope: Scope): unknown {
    let value: unknown = NO_VALUE;
    let piped = false;
    for (const command of pipeline.commands) {
      value = this.command(command, dot, scope, piped ? [value] : []);
      piped = true;
    }
    for (const name of pipeline.declare) {
      if (pipeline.assign) scope.set(name, value);
      else scope.variables.set(name, value);
    }
    return value;
  }

  private command(command: Command, dot: unknown, scope: Scope, piped: unknown[]): unknown {
    const [head, ...rest] = command.args as [Operand, ...Operand[]];
    if (head.kind === "function") {
      const args = [...rest.map((operand) => this.operand(operand, dot, scope)), ...piped];
      // a call costs a step, and one more per KiB it reads: len or index of a long string
      // called in a loop is work that the node count alone would not see
      const reads = textLength(args);
      this.step(1 + Math.floor(reads / CHARACTERS_PER_STEP));
      const builds = TEXT_BUILDERS.has(head.name);
      if (builds) this.ensureRoom(reads);
      const result = callFunction(head.name, args, args.length);
      if (builds && typeof result === "string") this.produce(result);
      return result;
    }
    if (rest.length > 0 || piped.length > 0) {
      throw new GoTemplateError(`can't give argument to non-function ${describe(head)}`);
    }
    return this.operand(head, dot, scope);
  }

  private operand(operand: Operand, dot: unknown, scope: Scope): unknown {
    switch (operand.kind) {
      case "dot":
        return dot;
      case "literal":
        return operand.value;
      case "variable":
        return scope.get(operand.name);
      case "pipeline":
        return this.pipeline(operand.pipeline, dot, scope);
      case "function":
        this.step();
        return callFunction(operand.name, [], 0);
      case "field": {
        let value = operand.base ? this.operand(operand.base, dot, scope) : dot;
        for (const name of operand.names) value = fieldOf(value, name);
        return value;
      }
    }
  }
}

function describe(operand: Operand): string {
  switch (operand.kind) {
    case "field":
      return `.${operand.names.join(".")}`;
    case "variable":
      return operand.name;
    default:
      return operand.kind;
  }
}

function fieldOf(value: unknown, name: string): unknown {
  if (value === NO_VALUE || value === null || value === undefined) return NO_VALUE;
  if (typeof value === "object" && !Array.isArray(value)) {
    return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : NO_VALUE;
  }
  throw new GoTemplateError(`can't evaluate field ${name} in type ${Array.isArray(value) ? "slice" : typeof value}`);
}

/**
 * Runs a parsed template with `data` as its dot (a flat map of strings, as case-backend passes
 * it), values HTML-escaped; throws GoTemplateError where Go's execution fails.
 */
export function executeGoTemplate(template: GoTemplate, data: Readonly<Record<string, string>>): string {
  const output: string[] = [];
  new Execution(template, output).run(template.body, data, new Scope(new Map([["$", data]]), null));
  return output.join("");
}

/** Parses and runs `source` with `data`. */
export function renderGoTemplate(source: string, data: Readonly<Record<string, string>>): string {
  return executeGoTemplate(parseGoTemplate(source), data);
}

/** How often a range runs its body, when the source says: `{{range 5}}`; else null (data decides). */
function literalIterations(pipeline: Pipeline): number | null {
  const [command, ...more] = pipeline.commands;
  if (!command || more.length > 0 || command.args.length !== 1) return null;
  const [operand] = command.args;
  if (operand?.kind !== "literal" || typeof operand.value !== "number" || !Number.isInteger(operand.value)) return null;
  return Math.max(0, operand.value);
}

/**
 * The steps a rendering takes on its most expensive path, counted on the parsed template without
 * running it: each node one step, an if/with its costlier branch, a range its body once per
 * iteration (once when the data decides how often: the limit at render time covers those), and
 * a {{template}} call the whole template it names, as deep as calls may go. That is where the
 * work of a small template explodes: templates calling others several times multiply.
 *
 * Counted depth by depth from the deepest call up, so no recursion follows the calls; the costs
 * stop changing once the deepest chain of calls is covered, which for templates without
 * recursion is after a few rounds. Saturates just past {@link MAX_TEMPLATE_STEPS}: the exact
 * figure above the limit does not matter.
 */
function expandedSteps(template: GoTemplate): { steps: number; heaviestCall: string | null } {
  const over = MAX_TEMPLATE_STEPS + 1;
  const nodesCost = (nodes: readonly Node[], callees: ReadonlyMap<string, number>): number => {
    let total = 0;
    for (const node of nodes) {
      total += 1;
      switch (node.kind) {
        case "if":
        case "with":
          total += Math.max(nodesCost(node.body, callees), nodesCost(node.otherwise, callees));
          break;
        case "range": {
          const iterations = literalIterations(node.pipeline) ?? 1;
          const body = nodesCost(node.body, callees);
          total += Math.max(iterations * (1 + body), nodesCost(node.otherwise, callees));
          break;
        }
        case "template":
          // an unknown template, or a call past the deepest, stops the rendering there
          total += callees.get(node.name) ?? 0;
          break;
        default:
          break;
      }
      if (total >= over) return over;
    }
    return total;
  };
  // the cost of each template when called at depth d, from the costs of the calls at depth d + 1
  let callees = new Map<string, number>();
  for (let depth = MAX_TEMPLATE_CALL_DEPTH; depth >= 1; depth--) {
    const costs = new Map<string, number>();
    for (const [name, body] of template.defined) costs.set(name, nodesCost(body, callees));
    const settled = [...costs].every(([name, cost]) => callees.get(name) === cost);
    callees = costs;
    if (settled) break;
  }
  const steps = nodesCost(template.body, callees);
  let heaviestCall: string | null = null;
  let heaviest = -1;
  const findCalls = (nodes: readonly Node[]) => {
    for (const node of nodes) {
      if (node.kind === "template") {
        const cost = callees.get(node.name) ?? 0;
        if (cost > heaviest) [heaviest, heaviestCall] = [cost, node.name];
      } else if (node.kind === "if" || node.kind === "with" || node.kind === "range") {
        findCalls(node.body);
        findCalls(node.otherwise);
      }
    }
  };
  if (steps >= over) findCalls(template.body);
  return { steps, heaviestCall };
}

/**
 * The check of a template before it is stored: case-backend's (templates.ResolveTemplate with an
 * empty map: not blank, parses, and runs), and studyflow's bound on the work a rendering may do,
 * so that the worker never meets a stored template that runs away: the expanded size of its
 * template calls, counted without running them, within {@link MAX_TEMPLATE_STEPS}, then a trial
 * rendering under the step and output limits. Returns what is wrong, or null.
 */
export function goTemplateProblem(source: string): string | null {
  if (source.trim() === "") return "empty template";
  try {
    const template = parseGoTemplate(source);
    const { steps, heaviestCall } = expandedSteps(template);
    if (steps > MAX_TEMPLATE_STEPS) {
      const culprit =
        heaviestCall === null
          ? ""
          : ` ({{template "${heaviestCall}"}} runs the templates it calls, and they theirs, each time)`;
      return `expands to more than ${MAX_TEMPLATE_STEPS} steps when rendered, the most a template may take${culprit}`;
    }
    executeGoTemplate(template, {});
    return null;
  } catch (error) {
    if (error instanceof GoTemplateError) return error.message;
    throw error;
  }
}
