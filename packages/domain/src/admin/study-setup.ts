import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { isTimeZoneName, validateRules } from "@studyflow/engine";
import {
  permissions,
  profiles,
  studies,
  users,
  type Database,
  type Executor,
  type StudyAction,
  type StudyConfig,
  type StudyStatus,
} from "@studyflow/db";
import { hashPassword } from "../accounts/passwords";
import { normalizeEmail } from "../accounts/password-reset";
import { Invalid, NotFound } from "../errors";
import { storeRules } from "../rules/study-rules";

/** Operator tasks (CLI, seeding, test fixtures): set up studies, rules, users and rights. */

export interface CreateStudyInput {
  key: string;
  status?: StudyStatus;
  /** Keys participant-id derivation; generated (256 bits) when absent. */
  secret?: string;
  trackAccount?: boolean;
  /** Rule settings (strict mode, time zone); checked as updateStudySettings checks them. */
  settings?: StudySettings;
}

export async function createStudy(db: Executor, input: CreateStudyInput) {
  const secret = input.secret ?? randomBytes(32).toString("hex");
  if (secret.length < 16) throw new Invalid("study secret must be at least 16 characters");
  if (input.settings?.timeZone !== undefined) checkTimeZone(input.settings.timeZone);
  const [row] = await db
    .insert(studies)
    .values({
      key: input.key,
      status: input.status ?? "active",
      secret,
      trackAccount: input.trackAccount ?? false,
      config: { ...input.settings },
    })
    .returning();
  if (!row) throw new Error("study insert returned nothing");
  return row;
}

/** The settings of how a study's rules run. */
export type StudySettings = Pick<StudyConfig, "strictRules" | "timeZone">;

/** An IANA zone name the runtime knows (e.g. Europe/Amsterdam), or Invalid naming it. */
export function checkTimeZone(timeZone: string): void {
  // the engine's own check, so a zone the settings accept is one the rules can compute in
  if (!isTimeZoneName(timeZone)) {
    throw new Invalid(`unknown time zone "${timeZone}": use an IANA name such as Europe/Amsterdam or UTC`);
  }
}

/** Changes the given settings, keeping the others; returns the study's settings after the change. */
export async function updateStudySettings(
  db: Executor,
  studyKey: string,
  settings: StudySettings,
): Promise<StudySettings> {
  if (settings.timeZone !== undefined) checkTimeZone(settings.timeZone);
  const changes = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  const [row] = await db
    .update(studies)
    .set({ config: sql`${studies.config} || ${JSON.stringify(changes)}::text::jsonb`, updatedAt: new Date() })
    .where(eq(studies.key, studyKey))
    .returning({ config: studies.config });
  if (!row) throw new NotFound(`study "${studyKey}" not found`);
  return { strictRules: row.config.strictRules ?? false, timeZone: row.config.timeZone ?? "UTC" };
}

/** Validates a rule set with the engine's validator and stores it as the study's next version. */
export async function setStudyRules(db: Database, studyKey: string, rules: unknown, uploadedBy: string) {
  const validation = validateRules(rules);
  if (!validation.ok) {
    throw new Invalid(
      `invalid rules: ${validation.errors.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
    );
  }
  return db.transaction(async (tx) => {
    // Serialises concurrent uploads for one study, so each gets its own version number.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`study-rules:${studyKey}`}))`);
    return storeRules(tx, studyKey, validation.rules, uploadedBy);
  });
}

export interface SyntheticParticipantsInput {
  studyKey: string;
  count: number;
  /** Statuses assigned round-robin; default all active. */
  statuses?: string[];
  enteredAt: number;
  /** Prefix of generated participant ids (ids are prefix + zero-padded index, so key order is index order). */
  idPrefix?: string;
}

/** Inserts many participants server-side in one statement per 50,000, for demos and benchmarks. */
export async function addSyntheticParticipants(db: Executor, input: SyntheticParticipantsInput): Promise<number> {
  const statuses = input.statuses && input.statuses.length > 0 ? input.statuses : ["active"];
  const prefix = input.idPrefix ?? "p";
  const step = 50_000;
  for (let start = 0; start < input.count; start += step) {
    const end = Math.min(input.count, start + step);
    await db.execute(sql`
      insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
      select ${input.studyKey}, ${prefix} || lpad(i::text, 9, '0'),
             ${JSON.stringify(statuses)}::text::jsonb ->> (i % ${statuses.length}), ${input.enteredAt}, ${input.enteredAt}
      from generate_series(${start}::int, ${end - 1}::int) as i`);
  }
  return input.count;
}

export interface CreateUserInput {
  email: string;
  password: string;
  /** Profile aliases; the first is the main profile. Default: one profile named after the e-mail. */
  profiles?: string[];
  preferredLanguage?: string;
}

export async function createUserWithProfiles(db: Database, input: CreateUserInput) {
  const passwordHash = await hashPassword(input.password);
  const email = normalizeEmail(input.email);
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ email, passwordHash, preferredLanguage: input.preferredLanguage ?? "en" })
      .returning();
    if (!user) throw new Error("user insert returned nothing");
    const aliases = input.profiles && input.profiles.length > 0 ? input.profiles : [email.split("@")[0] ?? "main"];
    const created = await tx
      .insert(profiles)
      .values(aliases.map((alias, index) => ({ userId: user.id, alias, mainProfile: index === 0 })))
      .returning();
    return { user, profiles: created };
  });
}

export async function grantPermission(db: Executor, subjectId: string, studyKey: string, action: StudyAction | "*") {
  await db.insert(permissions).values({ subjectId, studyKey, action }).onConflictDoNothing();
}
