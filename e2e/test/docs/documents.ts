import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repository } from "../doc-shell-block";

/** A page of the documentation: its path from the repository's root and its text. */
export interface Document {
  file: string;
  text: string;
}

/** README.md and every page in docs/, the documentation a reader is sent through. */
export function documents(): Document[] {
  const pages = readdirSync(path.join(repository, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...pages].map((file) => ({ file, text: readDocument(file) }));
}

export function readDocument(file: string): string {
  return readFileSync(path.join(repository, file), "utf8");
}

/** The text outside fenced code blocks (```…```), where Markdown links and headings live. */
export function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "");
}

/** The contents of fenced ```sh blocks. */
export function shellBlocks(text: string): string[] {
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

/** Inline code spans of the prose (`…`), table cells included; `\|` in a table cell is `|`. */
export function codeSpans(text: string): string[] {
  return [...prose(text).matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((match) => (match[1] ?? "").replace(/\\\|/g, "|"));
}

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as dashes. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = (match[1] ?? "")
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
