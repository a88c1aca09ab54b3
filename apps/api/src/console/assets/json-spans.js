// @ts-check
// Where each value of a JSON text lies, so that a problem the API names by its JSON path
// ("rules[1].data[0].exp.name") can be marked in the text a person typed.

/**
 * @typedef {{ start: number, end: number }} Span
 * @typedef {Span & (
 *   { kind: "object", members: Map<string, JsonNode> } |
 *   { kind: "array", items: JsonNode[] } |
 *   { kind: "scalar" }
 * )} JsonNode
 */

/** The API refuses bodies nested deeper (its input boundary); the editor says so before sending. */
export const MAX_NESTING = 256;

/** A JSON text that does not parse, with the offset where it goes wrong. */
export class JsonSyntaxError extends Error {
  /**
   * @param {string} message
   * @param {number} position
   */
  constructor(message, position) {
    super(message);
    this.name = "JsonSyntaxError";
    this.position = position;
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- JSON strings may not hold raw control characters
const STRING_BODY = /(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y;

/**
 * The spans of every value of a JSON text (RFC 8259, as JSON.parse reads it).
 * @param {string} text
 * @returns {JsonNode}
 */
export function parseSpans(text) {
  let at = 0;

  const skipWhitespace = () => {
    while (at < text.length && WHITESPACE.has(text.charAt(at))) at++;
  };

  /** @param {string} what */
  const fail = (what) => {
    const found = at >= text.length ? "the end of the text" : JSON.stringify(text.charAt(at));
    return new JsonSyntaxError(`expected ${what}, found ${found}`, at);
  };

  /** @returns {string} the string's value */
  const readString = () => {
    const start = at;
    if (text.charAt(at) !== '"') throw fail("a string");
    STRING_BODY.lastIndex = at + 1;
    STRING_BODY.exec(text);
    at = STRING_BODY.lastIndex;
    if (text.charAt(at) !== '"') {
      throw at >= text.length
        ? new JsonSyntaxError("the string is not closed", start)
        : fail("a closing quote (control characters and lone backslashes must be escaped)");
    }
    at++;
    const value = /** @type {unknown} */ (JSON.parse(text.slice(start, at)));
    return String(value);
  };

  /**
   * @param {number} depth
   * @returns {JsonNode}
   */
  const readValue = (depth) => {
    skipWhitespace();
    const start = at;
    const char = text.charAt(at);
    if (char === "{" || char === "[") {
      if (depth >= MAX_NESTING) throw new JsonSyntaxError(`nested deeper than ${MAX_NESTING} levels`, at);
      at++;
      skipWhitespace();
      if (char === "{") {
        /** @type {Map<string, JsonNode>} */
        const members = new Map();
        if (text.charAt(at) === "}") {
          at++;
          return { kind: "object", members, start, end: at };
        }
        for (;;) {
          skipWhitespace();
          const key = readString();
          skipWhitespace();
          if (text.charAt(at) !== ":") throw fail('":" after a key');
          at++;
          members.set(key, readValue(depth + 1));
          skipWhitespace();
          if (text.charAt(at) === ",") {
            at++;
            continue;
          }
          if (text.charAt(at) === "}") {
            at++;
            return { kind: "object", members, start, end: at };
          }
          throw fail('"," or "}"');
        }
      }
      /** @type {JsonNode[]} */
      const items = [];
      if (text.charAt(at) === "]") {
        at++;
        return { kind: "array", items, start, end: at };
      }
      for (;;) {
        items.push(readValue(depth + 1));
        skipWhitespace();
        if (text.charAt(at) === ",") {
          at++;
          continue;
        }
        if (text.charAt(at) === "]") {
          at++;
          return { kind: "array", items, start, end: at };
        }
        throw fail('"," or "]"');
      }
    }
    if (char === '"') {
      readString();
      return { kind: "scalar", start, end: at };
    }
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return { kind: "scalar", start, end: at };
      }
    }
    NUMBER.lastIndex = at;
    if (NUMBER.exec(text)) {
      at = NUMBER.lastIndex;
      return { kind: "scalar", start, end: at };
    }
    throw fail("a value");
  };

  const root = readValue(0);
  skipWhitespace();
  if (at < text.length) throw fail("the end of the text");
  return root;
}

/**
 * The steps of a path as the API writes it: a root name, then `[index]` and `.key` steps.
 * "rules[1].data[0].exp.name" → [1, "data", 0, "exp", "name"].
 * @param {string} path
 * @returns {(string | number)[]}
 */
export function pathSteps(path) {
  /** @type {(string | number)[]} */
  const steps = [];
  const pattern = /\[(\d+)\]|\.([^.[\]]+)/g;
  const rootEnd = path.search(/[.[]/);
  if (rootEnd === -1) return steps;
  for (const match of path.slice(rootEnd).matchAll(pattern)) {
    steps.push(match[1] === undefined ? (match[2] ?? "") : Number(match[1]));
  }
  return steps;
}

/**
 * The span of the value a path names, or of its deepest existing ancestor when the value is
 * missing (a missing "name" marks the object that lacks it).
 * @param {JsonNode} root
 * @param {string} path
 * @returns {Span & { exact: boolean }}
 */
export function locate(root, path) {
  let node = root;
  for (const step of pathSteps(path)) {
    /** @type {JsonNode | undefined} */
    let next;
    if (typeof step === "number" && node.kind === "array") next = node.items[step];
    else if (typeof step === "string" && node.kind === "object") next = node.members.get(step);
    if (!next) return { start: node.start, end: node.end, exact: false };
    node = next;
  }
  return { start: node.start, end: node.end, exact: true };
}

/**
 * Line and column (from 1) of an offset, for messages.
 * @param {string} text
 * @param {number} offset
 */
export function lineAndColumn(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}
