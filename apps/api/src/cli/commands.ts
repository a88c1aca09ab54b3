import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DrizzleQueryError, eq } from "drizzle-orm";
import { z } from "zod";
import { ConfigError } from "@studyflow/config";
import {
  runMigrations,
  studies,
  users,
  type DbHandle,
  type Executor,
  type StudyAction,
  type StudyStatus,
} from "@studyflow/db";
import {
  Conflict,
  DomainError,
  Invalid,
  NotFound,
  addSyntheticParticipants,
  checkPasswordRule,
  createStudy,
  createUserWithProfiles,
  grantPermission,
  initiatePasswordReset,
  revokeSubjectTokens,
  setStudyRules,
  storeRules,
  mintManagementToken,
  mintParticipantToken,
} from "@studyflow/domain";
import { validateRules, type Expression } from "@studyflow/engine";
import type { ApiConfig } from "../config";
import { fieldLines, type Output } from "./output";

/** What every command works with; tests build one over their own database. */
export interface CliContext {
  database: DbHandle;
  config: ApiConfig;
  output: Output;
  /** Where relative file arguments (`--rules`) are resolved: the directory the operator typed the command in. */
  workingDirectory: string;
}

/** Wrong command line: unknown command or flag, missing or malformed value. Exit code 1. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Recorded as the uploader of rule versions stored from the command line. */
const UPLOADED_BY = "operator-cli";

const STUDY_STATUSES = ["active", "inactive"] as const satisfies readonly StudyStatus[];
const PERMISSION_ACTIONS = [
  "edit-participant-data",
  "run-study-action",
  "update-study-props",
  "*",
] as const satisfies readonly (StudyAction | "*")[];

/**
 * Upper bound of `participants:add --count`: large enough for load tests of a big cohort, small
 * enough that a stray extra zero does not fill the disk. It also keeps generated ids (prefix +
 * 9 digits) in index order.
 */
const MAX_SYNTHETIC_PARTICIPANTS = 10_000_000;

/** Token lifetimes: the minters' default, and a ceiling that catches milliseconds typed as seconds. */
const DEFAULT_TOKEN_TTL_SECONDS = 3_600;
const MAX_TOKEN_TTL_SECONDS = 366 * 86_400;

/** A rules file with hundreds of mistakes is better shown in part than as a wall of text. */
const MAX_SHOWN_RULE_ISSUES = 10;

// ---- the commands ------------------------------------------------------------------------------

export async function migrate(ctx: CliContext) {
  await runMigrations(ctx.config.DATABASE_URL);
  const data = { migrated: true };
  ctx.output.result(data, ["migrations applied"]);
  return data;
}

export interface StudyCreateInput {
  key: string;
  status?: StudyStatus;
  secret?: string;
  trackAccount?: boolean;
  /** Path of a JSON file holding an Expression array, stored as rules version 1. */
  rulesFile?: string;
}

export async function studyCreate(ctx: CliContext, input: StudyCreateInput) {
  // Read and validated before anything is written: a bad file must leave no study behind.
  const rules = input.rulesFile === undefined ? undefined : await readRulesFile(ctx, input.rulesFile);
  const { study, rulesVersion } = await translateUniqueViolation(
    ctx.database.db.transaction(async (tx) => {
      const study = await createStudy(tx, {
        key: input.key,
        ...(input.status ? { status: input.status } : {}),
        ...(input.secret === undefined ? {} : { secret: input.secret }),
        trackAccount: input.trackAccount ?? false,
      });
      // Same transaction as the study: either both exist or neither.
      const rulesVersion = rules ? await storeRules(tx, study.key, rules, UPLOADED_BY) : null;
      return { study, rulesVersion };
    }),
    `study "${input.key}" already exists`,
  );
  const data = {
    study: { key: study.key, status: study.status, trackAccount: study.trackAccount, createdAt: study.createdAt },
    rulesVersion,
  };
  ctx.output.result(data, [
    `study "${study.key}" created`,
    ...fieldLines([
      ["status", study.status],
      ["track account", study.trackAccount],
      ["rules version", rulesVersion ?? "none (upload with study:set-rules)"],
    ]),
  ]);
  return data;
}

export interface StudySetRulesInput {
  key: string;
  rulesFile: string;
}

export async function studySetRules(ctx: CliContext, input: StudySetRulesInput) {
  await requireStudy(ctx.database.db, input.key);
  const rules = await readRulesFile(ctx, input.rulesFile);
  const version = await setStudyRules(ctx.database.db, input.key, rules, UPLOADED_BY);
  const data = { studyKey: input.key, version, ruleCount: rules.length };
  ctx.output.result(data, [`rules version ${version} stored for study "${input.key}" (${rules.length} rules)`]);
  return data;
}

export interface ParticipantsAddInput {
  studyKey: string;
  count: number;
  /** Assigned round-robin; default all active. */
  statuses?: string[];
  /** Prefix of the generated participant ids; default "p". */
  prefix?: string;
  /** Unix seconds written as enteredAt/modifiedAt; default now. */
  enteredAt?: number;
}

export async function participantsAdd(ctx: CliContext, input: ParticipantsAddInput) {
  await requireStudy(ctx.database.db, input.studyKey);
  const prefix = input.prefix ?? "p";
  const statuses = input.statuses && input.statuses.length > 0 ? input.statuses : ["active"];
  const enteredAt = input.enteredAt ?? Math.floor(Date.now() / 1000);
  // One transaction, so a clash with existing ids halfway through leaves no partial cohort.
  const added = await translateUniqueViolation(
    ctx.database.db.transaction((tx) =>
      addSyntheticParticipants(tx, {
        studyKey: input.studyKey,
        count: input.count,
        statuses,
        enteredAt,
        idPrefix: prefix,
      }),
    ),
    `participant ids starting with "${prefix}" already exist in study "${input.studyKey}"; choose another --prefix`,
  );
  // Mirrors the id scheme of addSyntheticParticipants: prefix + index padded to 9 digits.
  const idAt = (index: number) => `${prefix}${String(index).padStart(9, "0")}`;
  const data = {
    studyKey: input.studyKey,
    added,
    statuses,
    enteredAt,
    firstParticipantId: idAt(0),
    lastParticipantId: idAt(added - 1),
  };
  ctx.output.result(data, [
    `${added} participants added to study "${input.studyKey}"`,
    ...fieldLines([
      ["statuses", statuses.join(", ")],
      ["ids", `${data.firstParticipantId} … ${data.lastParticipantId}`],
    ]),
  ]);
  return data;
}

export interface UserCreateInput {
  email: string;
  password: string;
  /** Profile aliases; the first becomes the main profile. */
  profiles?: string[];
  language?: string;
}

export async function userCreate(ctx: CliContext, input: UserCreateInput) {
  // The same rule as password resets, so operator-made accounts are no weaker than others.
  const violation = checkPasswordRule(input.password);
  if (violation !== null) throw new Invalid(`--password: ${violation}`);
  const { user, profiles } = await translateUniqueViolation(
    createUserWithProfiles(ctx.database.db, {
      email: input.email,
      password: input.password,
      ...(input.profiles ? { profiles: input.profiles } : {}),
      ...(input.language ? { preferredLanguage: input.language } : {}),
    }),
    `an account with e-mail ${input.email} already exists`,
  );
  const data = {
    user: {
      id: user.id,
      email: user.email,
      preferredLanguage: user.preferredLanguage,
      tokenVersion: user.tokenVersion,
    },
    profiles: profiles.map((profile) => ({ id: profile.id, alias: profile.alias, mainProfile: profile.mainProfile })),
  };
  ctx.output.result(data, [
    `user created`,
    ...fieldLines([
      ["id", user.id],
      ["email", user.email],
      ["language", user.preferredLanguage],
    ]),
    "profiles:",
    ...data.profiles.map((profile) => `  ${profile.id}  ${profile.alias}${profile.mainProfile ? " (main)" : ""}`),
  ]);
  return data;
}

export interface PermissionGrantInput {
  subject: string;
  /** A study key, or "*" for every study. */
  studyKey: string;
  action: StudyAction | "*";
}

export async function permissionGrant(ctx: CliContext, input: PermissionGrantInput) {
  // Permissions have no foreign key (so "*" can exist); checking here catches a mistyped key.
  if (input.studyKey !== "*") await requireStudy(ctx.database.db, input.studyKey);
  await grantPermission(ctx.database.db, input.subject, input.studyKey, input.action);
  const data = { granted: { subject: input.subject, studyKey: input.studyKey, action: input.action } };
  ctx.output.result(data, [`granted "${input.action}" on study "${input.studyKey}" to ${input.subject}`]);
  return data;
}

export interface ManagementTokenCommandInput {
  subject: string;
  admin?: boolean;
  ttlSeconds?: number;
}

export async function tokenManagement(ctx: CliContext, input: ManagementTokenCommandInput) {
  const now = Date.now();
  const ttlSeconds = input.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  const admin = input.admin ?? false;
  const token = await mintManagementToken({
    subject: input.subject,
    isAdmin: admin,
    secret: ctx.config.MANAGEMENT_JWT_SECRET,
    ttlSeconds,
    now,
  });
  const data = { token, subject: input.subject, admin, expiresAt: expiryOf(now, ttlSeconds) };
  ctx.output.result(data, [
    token,
    ...fieldLines([
      ["subject", input.subject],
      ["admin", admin],
      ["expires", data.expiresAt],
    ]),
  ]);
  return data;
}

export interface TokenRevokeInput {
  subject: string;
}

/**
 * Ends every management token of a subject issued before this second; tokens minted from now on
 * work. Token issue times have one-second precision, hence the whole second.
 */
export async function tokenRevoke(ctx: CliContext, input: TokenRevokeInput) {
  const revokedBefore = new Date(Math.floor(Date.now() / 1000) * 1000);
  await revokeSubjectTokens(ctx.database.db, input.subject, revokedBefore);
  const data = { subject: input.subject, revokedBefore: revokedBefore.toISOString() };
  ctx.output.result(data, [`management tokens of ${input.subject} issued before ${data.revokedBefore} are revoked`]);
  return data;
}

export interface ParticipantTokenCommandInput {
  userId: string;
  ttlSeconds?: number;
}

export async function tokenParticipant(ctx: CliContext, input: ParticipantTokenCommandInput) {
  const [user] = await ctx.database.db
    .select({ tokenVersion: users.tokenVersion })
    .from(users)
    .where(eq(users.id, input.userId))
    .limit(1);
  if (!user) throw new NotFound(`no user with id ${input.userId}`);
  const now = Date.now();
  const ttlSeconds = input.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  // The current version: a token carrying an older one is refused after a password reset.
  const token = await mintParticipantToken({
    userId: input.userId,
    tokenVersion: user.tokenVersion,
    secret: ctx.config.PARTICIPANT_JWT_SECRET,
    ttlSeconds,
    now,
  });
  const data = { token, userId: input.userId, tokenVersion: user.tokenVersion, expiresAt: expiryOf(now, ttlSeconds) };
  ctx.output.result(data, [
    token,
    ...fieldLines([
      ["user", input.userId],
      ["token version", user.tokenVersion],
      ["expires", data.expiresAt],
    ]),
  ]);
  return data;
}

export interface PasswordResetTokenInput {
  email: string;
}

export async function passwordResetToken(ctx: CliContext, input: PasswordResetTokenInput) {
  const now = new Date();
  const issued = await initiatePasswordReset(ctx.database.db, {
    email: input.email,
    now,
    ttlSeconds: ctx.config.RESET_TOKEN_TTL_SECONDS,
    resetUrl: ctx.config.RESET_PASSWORD_URL,
  });
  // Unlike the HTTP endpoint, an operator may learn whether an account exists.
  if (!issued) throw new NotFound("no account with that e-mail");
  const link = new URL(ctx.config.RESET_PASSWORD_URL);
  link.searchParams.set("token", issued.token);
  const data = {
    token: issued.token,
    resetUrl: link.toString(),
    // The same instant initiatePasswordReset stored (milliseconds, unlike JWT expiry).
    expiresAt: new Date(now.getTime() + ctx.config.RESET_TOKEN_TTL_SECONDS * 1000).toISOString(),
  };
  ctx.output.result(data, [
    issued.token,
    ...fieldLines([
      ["reset link", data.resetUrl],
      ["expires", data.expiresAt],
    ]),
    "the reset e-mail to the account holder was queued as well",
  ]);
  return data;
}

// ---- shared steps ------------------------------------------------------------------------------

function expiryOf(nowMs: number, ttlSeconds: number): string {
  // The minters count whole seconds from the floored issue time; so does this.
  return new Date((Math.floor(nowMs / 1000) + ttlSeconds) * 1000).toISOString();
}

async function requireStudy(db: Executor, studyKey: string): Promise<void> {
  const [study] = await db.select({ key: studies.key }).from(studies).where(eq(studies.key, studyKey)).limit(1);
  if (!study) throw new NotFound(`no study "${studyKey}"`);
}

/** Reads a rules file and validates it with the engine's validator; the messages name JSON paths. */
async function readRulesFile(ctx: CliContext, file: string): Promise<Expression[]> {
  let text: string;
  try {
    text = await readFile(resolve(ctx.workingDirectory, file), "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
    throw new Invalid(`cannot read rules file ${file}: ${reason}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Invalid(`rules file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const validation = validateRules(parsed);
  if (!validation.ok) {
    const shown = validation.errors.slice(0, MAX_SHOWN_RULE_ISSUES).map((issue) => `${issue.path}: ${issue.message}`);
    const hidden = validation.errors.length - shown.length;
    throw new Invalid(`invalid rules in ${file}: ${shown.join("; ")}${hidden > 0 ? ` (and ${hidden} more)` : ""}`);
  }
  return validation.rules;
}

const UNIQUE_VIOLATION = "23505";

function postgresCodeOf(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** A duplicate key is the operator's input clashing with existing data, not a server failure. */
async function translateUniqueViolation<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (postgresCodeOf(error) === UNIQUE_VIOLATION) throw new Conflict(message);
    throw error;
  }
}

// ---- the command line --------------------------------------------------------------------------

interface FlagSpec {
  type: "string" | "boolean";
  /** Placeholder of the value in the usage text. */
  value?: string;
  required?: boolean;
  description: string;
}

type FlagValues = Record<string, string | boolean | undefined>;

function present<T>(name: string, value: T | undefined): T {
  if (value === undefined) throw new UsageError(`missing required flag --${name}`);
  return value;
}

/** Typed access to a command's flags; every complaint names the flag. */
class Flags {
  constructor(private readonly values: FlagValues) {}

  string(name: string): string {
    return present(name, this.optionalString(name));
  }

  optionalString(name: string): string | undefined {
    const value = this.values[name];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} needs a non-empty value`);
    return value;
  }

  boolean(name: string): boolean {
    return this.values[name] === true;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const raw = this.optionalString(name);
    if (raw === undefined) return undefined;
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  }

  list(name: string): string[] | undefined {
    const raw = this.optionalString(name);
    if (raw === undefined) return undefined;
    const items = raw.split(",").map((item) => item.trim());
    if (items.some((item) => item === ""))
      throw new UsageError(`--${name} is a comma-separated list without empty items`);
    return items;
  }

  requiredInteger(name: string, min: number, max: number): number {
    return present(name, this.integer(name, min, max));
  }

  requiredOneOf<T extends string>(name: string, allowed: readonly T[]): T {
    return present(name, this.oneOf(name, allowed));
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const raw = this.optionalString(name);
    if (raw === undefined) return undefined;
    const match = allowed.find((candidate) => candidate === raw);
    if (match === undefined) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}; got "${raw}"`);
    return match;
  }

  /** Study keys end up in URL paths of the API, so they follow the API's rule for keys. */
  studyKey(name: string, options: { allowWildcard?: boolean } = {}): string {
    const value = this.string(name);
    if (options.allowWildcard && value === "*") return value;
    if (value.length > 200 || !/^[^\s/?#]+$/.test(value)) {
      throw new UsageError(`--${name} must be at most 200 characters, without spaces, '/', '?' or '#'`);
    }
    return value;
  }
}

interface CommandDefinition<I> {
  name: string;
  summary: string;
  flags: Record<string, FlagSpec>;
  /** Turns the flags into the command's input; runs before any connection is opened. */
  input: (flags: Flags) => I;
  run: (ctx: CliContext, input: I) => Promise<unknown>;
}

export interface Command {
  name: string;
  summary: string;
  flags: Record<string, FlagSpec>;
  bind: (flags: Flags) => (ctx: CliContext) => Promise<unknown>;
}

function defineCommand<I>(definition: CommandDefinition<I>): Command {
  return {
    name: definition.name,
    summary: definition.summary,
    flags: definition.flags,
    bind: (flags) => {
      const input = definition.input(flags);
      return (ctx) => definition.run(ctx, input);
    },
  };
}

const JSON_FLAG: FlagSpec = { type: "boolean", description: "print one JSON object on stdout instead of text" };
const TTL_FLAG: FlagSpec = {
  type: "string",
  value: "SECONDS",
  description: `token lifetime (default ${DEFAULT_TOKEN_TTL_SECONDS}, at most ${MAX_TOKEN_TTL_SECONDS})`,
};

export const COMMANDS: readonly Command[] = [
  defineCommand({
    name: "migrate",
    summary: "apply pending database migrations to DATABASE_URL",
    flags: {},
    input: () => undefined,
    run: (ctx) => migrate(ctx),
  }),
  defineCommand({
    name: "study:create",
    summary: "create a study, optionally with its first rules version (validated before anything is written)",
    flags: {
      key: { type: "string", value: "KEY", required: true, description: "study key" },
      status: { type: "string", value: "active|inactive", description: "initial status (default active)" },
      secret: {
        type: "string",
        value: "SECRET",
        description: "key of participant-id derivation, at least 16 characters (default: 256 random bits)",
      },
      "track-account": { type: "boolean", description: "record a hashed account id on participants" },
      rules: { type: "string", value: "FILE", description: "JSON file holding an array of rule expressions" },
    },
    input: (flags): StudyCreateInput => {
      const status = flags.oneOf("status", STUDY_STATUSES);
      const secret = flags.optionalString("secret");
      const rulesFile = flags.optionalString("rules");
      return {
        key: flags.studyKey("key"),
        ...(status ? { status } : {}),
        ...(secret === undefined ? {} : { secret }),
        trackAccount: flags.boolean("track-account"),
        ...(rulesFile === undefined ? {} : { rulesFile }),
      };
    },
    run: studyCreate,
  }),
  defineCommand({
    name: "study:set-rules",
    summary: "validate a rules file and store it as the study's next rules version",
    flags: {
      key: { type: "string", value: "KEY", required: true, description: "study key" },
      rules: {
        type: "string",
        value: "FILE",
        required: true,
        description: "JSON file holding an array of rule expressions",
      },
    },
    input: (flags): StudySetRulesInput => ({ key: flags.studyKey("key"), rulesFile: flags.string("rules") }),
    run: studySetRules,
  }),
  defineCommand({
    name: "participants:add",
    summary: "insert synthetic participants (for demos and load tests)",
    flags: {
      study: { type: "string", value: "KEY", required: true, description: "study key" },
      count: {
        type: "string",
        value: "N",
        required: true,
        description: `how many, 1 to ${MAX_SYNTHETIC_PARTICIPANTS}`,
      },
      statuses: {
        type: "string",
        value: "S1,S2,…",
        description: "study statuses assigned round-robin (default active)",
      },
      prefix: { type: "string", value: "P", description: "participant id prefix; ids are P + 9 digits (default p)" },
    },
    input: (flags): ParticipantsAddInput => {
      const statuses = flags.list("statuses");
      const prefix = flags.optionalString("prefix");
      return {
        studyKey: flags.studyKey("study"),
        count: flags.requiredInteger("count", 1, MAX_SYNTHETIC_PARTICIPANTS),
        ...(statuses ? { statuses } : {}),
        ...(prefix === undefined ? {} : { prefix }),
      };
    },
    run: participantsAdd,
  }),
  defineCommand({
    name: "user:create",
    summary: "create a participant account with profiles",
    flags: {
      email: { type: "string", value: "E", required: true, description: "login e-mail" },
      password: { type: "string", value: "P", required: true, description: "password (same rule as password resets)" },
      profiles: {
        type: "string",
        value: "A1,A2,…",
        description: "profile aliases; the first is the main profile (default: the e-mail's local part)",
      },
      language: { type: "string", value: "LANG", description: "preferred language (default en)" },
    },
    input: (flags): UserCreateInput => {
      const email = flags.string("email");
      if (!z.email().safeParse(email.trim()).success) throw new UsageError(`--email must be an e-mail address`);
      const profiles = flags.list("profiles");
      const language = flags.optionalString("language");
      if (language !== undefined && !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language)) {
        throw new UsageError(`--language must be a language tag such as en or de-CH`);
      }
      return {
        email,
        password: flags.string("password"),
        ...(profiles ? { profiles } : {}),
        ...(language === undefined ? {} : { language }),
      };
    },
    run: userCreate,
  }),
  defineCommand({
    name: "permission:grant",
    summary: "give a management subject a right on one study or on all",
    flags: {
      subject: {
        type: "string",
        value: "S",
        required: true,
        description: "subject (the `sub` of its management tokens)",
      },
      study: { type: "string", value: "KEY|*", required: true, description: "study key, or * for every study" },
      action: {
        type: "string",
        value: "ACTION",
        required: true,
        description: `the right granted: ${PERMISSION_ACTIONS.join(", ")} (* is every right)`,
      },
    },
    input: (flags): PermissionGrantInput => ({
      subject: flags.string("subject"),
      studyKey: flags.studyKey("study", { allowWildcard: true }),
      action: flags.requiredOneOf("action", PERMISSION_ACTIONS),
    }),
    run: permissionGrant,
  }),
  defineCommand({
    name: "token:management",
    summary: "mint a management (researcher/operator) token",
    flags: {
      subject: { type: "string", value: "S", required: true, description: "token subject" },
      admin: { type: "boolean", description: "admin token: every right on every study" },
      ttl: TTL_FLAG,
    },
    input: (flags): ManagementTokenCommandInput => {
      const ttlSeconds = flags.integer("ttl", 60, MAX_TOKEN_TTL_SECONDS);
      return {
        subject: flags.string("subject"),
        admin: flags.boolean("admin"),
        ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
      };
    },
    run: tokenManagement,
  }),
  defineCommand({
    name: "token:revoke",
    summary: "revoke every management token of a subject issued until now",
    flags: {
      subject: { type: "string", value: "S", required: true, description: "token subject" },
    },
    input: (flags): TokenRevokeInput => ({ subject: flags.string("subject") }),
    run: tokenRevoke,
  }),
  defineCommand({
    name: "token:participant",
    summary: "mint a participant token for a user (carries the user's current token version)",
    flags: {
      user: { type: "string", value: "USER_ID", required: true, description: "user id (UUID)" },
      ttl: TTL_FLAG,
    },
    input: (flags): ParticipantTokenCommandInput => {
      const userId = flags.string("user");
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(userId)) {
        throw new UsageError(`--user must be a user id (UUID), got "${userId}"`);
      }
      const ttlSeconds = flags.integer("ttl", 60, MAX_TOKEN_TTL_SECONDS);
      return { userId: userId.toLowerCase(), ...(ttlSeconds === undefined ? {} : { ttlSeconds }) };
    },
    run: tokenParticipant,
  }),
  defineCommand({
    name: "password-reset:token",
    summary: "issue a password-reset token for an account (also queues the reset e-mail)",
    flags: {
      email: { type: "string", value: "E", required: true, description: "the account's login e-mail" },
    },
    input: (flags): PasswordResetTokenInput => ({ email: flags.string("email") }),
    run: passwordResetToken,
  }),
];

const HELP_WORDS = new Set(["help", "--help", "-h"]);

export type CommandLine =
  | { kind: "help"; text: string }
  | { kind: "run"; command: string; json: boolean; run: (ctx: CliContext) => Promise<unknown> };

/**
 * Checks a whole command line (everything after the program name) without touching the
 * database, so a typo costs no connection and changes nothing.
 *
 * @throws UsageError naming the unknown command, or the flag that is unknown, missing or malformed.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const [name, ...rest] = argv;
  if (name === undefined || HELP_WORDS.has(name)) {
    const topic = rest[0];
    if (name === "help" && topic !== undefined) return { kind: "help", text: usage(findCommand(topic)) };
    return { kind: "help", text: usage() };
  }
  const command = findCommand(name);
  if (rest.some((arg) => arg === "--help" || arg === "-h")) return { kind: "help", text: usage(command) };

  const flagSpecs: Record<string, FlagSpec> = { ...command.flags, json: JSON_FLAG };
  // Non-strict parsing with tokens, so each complaint can name the flag in our own words.
  const { values, tokens } = parseArgs({
    args: [...rest],
    options: Object.fromEntries(Object.entries(flagSpecs).map(([flag, spec]) => [flag, { type: spec.type }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "positional") throw new UsageError(`${name}: unexpected argument "${token.value}"`);
    if (token.kind !== "option") continue;
    const spec = flagSpecs[token.name];
    if (!spec) throw new UsageError(`${name}: unknown flag ${token.rawName} (see: help ${name})`);
    if (spec.type === "boolean" && token.value !== undefined) {
      throw new UsageError(`${name}: flag --${token.name} takes no value`);
    }
    // "--key --json" would otherwise quietly make "--json" the key; "--key=-x" still works.
    const value = token.value;
    if (spec.type === "string" && (value === undefined || (!token.inlineValue && value.startsWith("-")))) {
      throw new UsageError(`${name}: flag --${token.name} needs a value`);
    }
  }
  const missing = Object.entries(command.flags)
    .filter(([flag, spec]) => spec.required && values[flag] === undefined)
    .map(([flag]) => `--${flag}`);
  if (missing.length > 0) {
    throw new UsageError(`${name}: missing required flag${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
  }
  let run: (ctx: CliContext) => Promise<unknown>;
  try {
    run = command.bind(new Flags(values));
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${name}: ${error.message}`);
    throw error;
  }
  return { kind: "run", command: name, json: values.json === true, run };
}

function findCommand(name: string): Command {
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`unknown command "${name}" (run "help" for the list)`);
  return command;
}

function synopsis(command: Command): string {
  const parts = Object.entries(command.flags).map(([flag, spec]) => {
    const text = spec.type === "boolean" ? `--${flag}` : `--${flag} ${spec.value ?? "VALUE"}`;
    return spec.required ? text : `[${text}]`;
  });
  return [command.name, ...parts, "[--json]"].join(" ");
}

function flagLines(command: Command): string[] {
  const entries = Object.entries({ ...command.flags, json: JSON_FLAG });
  const labels = entries.map(([flag, spec]) =>
    spec.type === "boolean" ? `--${flag}` : `--${flag} ${spec.value ?? "VALUE"}`,
  );
  const width = Math.max(...labels.map((label) => label.length));
  return entries.map(([, spec], index) => `      ${(labels[index] ?? "").padEnd(width)}  ${spec.description}`);
}

/** The usage of every command, or of one, built from the same table the parser reads. */
export function usage(command?: Command): string {
  const listed = command ? [command] : COMMANDS;
  const lines = [
    "studyflow operator CLI",
    "",
    "usage: npm run cli -- <command> [flags]",
    "",
    "Configuration comes from the environment, as for the API (DATABASE_URL, MANAGEMENT_JWT_SECRET,",
    "PARTICIPANT_JWT_SECRET, RESET_TOKEN_TTL_SECONDS, RESET_PASSWORD_URL).",
    "Exit codes: 0 done, 1 usage or validation error, 2 any other failure (e.g. database unreachable).",
    "",
    "commands:",
  ];
  for (const entry of listed) {
    lines.push(`  ${synopsis(entry)}`, `      ${entry.summary}`, ...flagLines(entry), "");
  }
  lines.push("  help [COMMAND]", "      this text, or one command's");
  return `${lines.join("\n")}\n`;
}

export interface Failure {
  exitCode: 1 | 2;
  message: string;
}

/** Domain errors that mean "your input is wrong" rather than "the system failed". */
const INPUT_ERROR_KINDS = new Set<DomainError["kind"]>(["invalid", "not-found", "conflict", "forbidden"]);

/**
 * The exit code and the one message shown for a failure. Messages never include a stack trace,
 * nor a failed query's parameters (they can hold password hashes); the driver's reason is enough.
 */
export function describeFailure(error: unknown): Failure {
  if (error instanceof UsageError) return { exitCode: 1, message: error.message };
  if (error instanceof ConfigError)
    return { exitCode: 1, message: `invalid configuration: ${error.issues.join("; ")}` };
  if (error instanceof DomainError) {
    return { exitCode: INPUT_ERROR_KINDS.has(error.kind) ? 1 : 2, message: error.message };
  }
  if (error instanceof DrizzleQueryError) {
    const cause = error.cause instanceof Error ? error.cause.message : "query failed";
    return { exitCode: 2, message: `database error: ${cause}` };
  }
  if (error instanceof Error) return { exitCode: 2, message: error.message || error.name };
  return { exitCode: 2, message: String(error) };
}
