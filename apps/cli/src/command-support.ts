import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Option } from "commander";
import { eq } from "drizzle-orm";
import { studies, type Executor } from "@studyflow/db";
import { Invalid, NotFound } from "@studyflow/domain/errors";
import { invalidRulesError } from "@studyflow/domain/rules";
import { validateRules, type Expression } from "@studyflow/engine";
import type { OutputContext } from "./command-definition";
import { wholeNumber } from "./flag-values";

/** Recorded as the uploader of rule versions stored from the command line. */
export const UPLOADED_BY = "operator-cli";

/** Token lifetimes: the minters' default, and a ceiling that catches milliseconds typed as seconds. */
export const DEFAULT_TOKEN_TTL_SECONDS = 3_600;
export const MAX_TOKEN_TTL_SECONDS = 366 * 86_400;

/** `--ttl` of the token commands. */
export const ttlFlag = () =>
  new Option(
    "--ttl <SECONDS>",
    `token lifetime (default ${DEFAULT_TOKEN_TTL_SECONDS}, at most ${MAX_TOKEN_TTL_SECONDS})`,
  );
export const ttlSeconds = wholeNumber(60, MAX_TOKEN_TTL_SECONDS).optional();

/** A rules file with hundreds of mistakes is better shown in part than as a wall of text. */
const MAX_SHOWN_RULE_ISSUES = 10;

export function expiryOf(nowMs: number, ttlSeconds: number): string {
  // The minters count whole seconds from the floored issue time; so does this.
  return new Date((Math.floor(nowMs / 1000) + ttlSeconds) * 1000).toISOString();
}

export async function requireStudy(db: Executor, studyKey: string): Promise<void> {
  const [study] = await db.select({ key: studies.key }).from(studies).where(eq(studies.key, studyKey)).limit(1);
  if (!study) throw new NotFound(`no study "${studyKey}"`);
}

/** Reads a rules file and validates it with the engine's validator; the messages name JSON paths. */
/**
 * The text of a file the operator named, resolved against the directory the command runs in.
 * `what` names the kind of file in the message ("rules file", "codes file").
 *
 * @throws Invalid when the file cannot be read.
 */
export async function readOperatorFile(ctx: OutputContext, file: string, what: string): Promise<string> {
  try {
    return await readFile(resolve(ctx.workingDirectory, file), "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
    throw new Invalid(`cannot read ${what} ${file}: ${reason}`);
  }
}

/** A JSON file the operator named, parsed; what it must hold is the caller's to check. */
export async function readJsonFile(ctx: OutputContext, file: string, what: string): Promise<unknown> {
  const text = await readOperatorFile(ctx, file, what);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Invalid(`${what} ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export async function readRulesFile(ctx: OutputContext, file: string): Promise<Expression[]> {
  const parsed = await readJsonFile(ctx, file, "rules file");
  const validation = validateRules(parsed);
  if (!validation.ok) {
    throw invalidRulesError(validation.errors, { subject: `invalid rules in ${file}`, shown: MAX_SHOWN_RULE_ISSUES });
  }
  return validation.rules;
}
