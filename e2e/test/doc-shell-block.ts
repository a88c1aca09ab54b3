import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, for the documents whose commands the tests run. */
export const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The first ```sh block below `heading` in a document of the repository (a path relative to its
 * root): what a reader copies into a shell, run by the tests as it stands so the page cannot drift.
 */
export async function shellBlockBelow(document: string, heading: string): Promise<string> {
  const text = await readFile(path.join(repository, document), "utf8");
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`${document} has no heading "${heading}"`);
  const block = /```sh\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (!block?.[1]) throw new Error(`${document}: no sh block below "${heading}"`);
  return block[1];
}
