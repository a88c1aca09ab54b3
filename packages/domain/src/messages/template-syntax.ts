import { Invalid } from "../errors";

/**
 * The syntax of message templates: plain text with `{{name}}` placeholders, nothing else. No
 * conditions, loops or code, so a template can neither fail at send time nor run anything, and
 * every mistake is found when it is uploaded.
 *
 * Names: `studyKey`, `studyName` (in the template's language), `messageType`, and the message's
 * payload as the rules write it: `flags.KEY`, `linkingCodes.KEY`, `eventData.KEY` (the last only
 * for SEND_MESSAGE_NOW, which has an event). A payload value that is missing renders empty.
 */
export type TemplatePart = { kind: "text"; text: string } | { kind: "value"; name: string };

/** Names that need no payload: the study and the message itself. */
export const TEMPLATE_VALUE_NAMES = ["studyKey", "studyName", "messageType"] as const;
/** Prefixes of the payload's names (`flags.KEY`), as the engine's SEND_MESSAGE_NOW payload has them. */
export const TEMPLATE_PAYLOAD_PREFIXES = ["flags", "linkingCodes", "eventData"] as const;

const PLACEHOLDER_NAME = /^([A-Za-z]+)(?:\.([^\s{}]+))?$/;
const KNOWN_NAMES = `${TEMPLATE_VALUE_NAMES.join(", ")}, ${TEMPLATE_PAYLOAD_PREFIXES.map((p) => `${p}.KEY`).join(", ")}`;

/** "line 3, column 7" of an offset, for people fixing a template in an editor. */
function position(source: string, offset: number): string {
  const before = source.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `line ${line}, column ${column}`;
}

function shown(text: string): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}

function isKnownName(name: string): boolean {
  const match = PLACEHOLDER_NAME.exec(name);
  if (!match) return false;
  const [, head, key] = match;
  if (key === undefined) return (TEMPLATE_VALUE_NAMES as readonly string[]).includes(head ?? "");
  return (TEMPLATE_PAYLOAD_PREFIXES as readonly string[]).includes(head ?? "");
}

function textPart(source: string, from: number, to: number, field: string): TemplatePart {
  const text = source.slice(from, to);
  const stray = text.indexOf("}}");
  if (stray >= 0) throw new Invalid(`${field}: "}}" at ${position(source, from + stray)} closes no "{{"`);
  return { kind: "text", text };
}

/**
 * Parses a template, or throws Invalid naming `field` ("subject", "body") and where the mistake
 * is: a `{{` never closed, a `}}` that closes nothing, or a placeholder that is not one of the
 * known names (Go's `{{.name}}` of the reference platform's templates included).
 */
export function parseTemplate(source: string, field: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf("{{", at);
    if (open < 0) {
      parts.push(textPart(source, at, source.length, field));
      break;
    }
    if (open > at) parts.push(textPart(source, at, open, field));
    const close = source.indexOf("}}", open + 2);
    if (close < 0) throw new Invalid(`${field}: "{{" at ${position(source, open)} is never closed with "}}"`);
    const inner = source.slice(open + 2, close);
    const name = inner.trim();
    if (inner.includes("{{") || !isKnownName(name)) {
      throw new Invalid(
        `${field}: {{${shown(inner)}}} at ${position(source, open)} is not a placeholder; ` +
          `write {{name}} with one of ${KNOWN_NAMES}`,
      );
    }
    parts.push({ kind: "value", name });
    at = close + 2;
  }
  return parts;
}

/** The template with its placeholders filled in; a name without a value renders empty. */
export function renderTemplate(parts: readonly TemplatePart[], values: Readonly<Record<string, string>>): string {
  return parts
    .map((part) =>
      part.kind === "text" ? part.text : Object.hasOwn(values, part.name) ? (values[part.name] ?? "") : "",
    )
    .join("");
}
