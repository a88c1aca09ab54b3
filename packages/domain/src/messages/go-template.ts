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
    const commands = this.commands("parenthesized pipeline");
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

/** "line 3" of an offset, for messages. */
function lineOf(source: string, offset: number): number {
  return source.slice(0, offset).split("\n").length;
}

/** Parses a template, or throws GoTemplateError saying what is wrong and on which line. */
export function parseGoTemplate(source: string): GoTemplate {
  const defined = new Map<string, Node[]>();
  const root: Frame = { kind: "root", into: [], chained: 0, variables: new Set(["$"]), inRange: false };
  const stack: Frame[] = [root];
  const top = () => stack[stack.length - 1] as Frame;
  let at = 0;
  let trimNext = false;
  while (at <= source.length) {
    const open = source.indexOf("{{", at);
    let text = source.slice(at, open < 0 ? source.length : open);
    if (trimNext) text = text.replace(/^\s+/, "");
    trimNext = false;
    if (open < 0) {
      if (text) top().into.push({ kind: "text", text });
      break;
    }
    const trimLeft = /^\{\{-[ \t\r\n]/.test(source.slice(open, open + 4));
    if (trimLeft) text = text.replace(/\s+$/, "");
    if (text) top().into.push({ kind: "text", text });
    const innerStart = open + (trimLeft ? 3 : 2);
    const line = lineOf(source, open);
    let inner: string;
    let close: number;
    const afterOpen = source.slice(innerStart).replace(/^\s*/, "");
    if (afterOpen.startsWith("/*")) {
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
  return format.replace(/%([-+# 0]*\d*(?:\.\d+)?)?([a-zA-Z%])/g, (_, _flags, verb: string) => {
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

class Execution {
  private depth = 0;
  constructor(
    private readonly template: GoTemplate,
    private readonly output: string[],
  ) {}

  run(nodes: Node[], dot: unknown, scope: Scope): void {
    for (const node of nodes) {
      switch (node.kind) {
        case "text":
          this.output.push(node.text);
          break;
        case "action": {
          const value = this.pipeline(node.pipeline, dot, scope);
          if (node.pipeline.declare.length === 0) this.output.push(htmlEscape(printed(value)));
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
          if (++this.depth > 100) throw new GoTemplateError("exceeded maximum template depth");
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
      entries = Array.from({ length: Math.max(0, value) }, (_, index) => [index, index]);
    } else if (typeof value === "object") {
      entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    } else throw new GoTemplateError(`range can't iterate over ${printed(value)}`);
    if (entries.length === 0) {
      this.run(node.otherwise, dot, inner);
      return;
    }
    for (const [key, item] of entries) {
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
      return callFunction(head.name, args, args.length);
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

/**
 * case-backend's check of a template before it is stored (templates.ResolveTemplate with an
 * empty map): not blank, parses, and runs. Returns what is wrong, or null.
 */
export function goTemplateProblem(source: string): string | null {
  if (source.trim() === "") return "empty template";
  try {
    renderGoTemplate(source, {});
    return null;
  } catch (error) {
    if (error instanceof GoTemplateError) return error.message;
    throw error;
  }
}
