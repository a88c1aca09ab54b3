import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { validateRules } from "@studyflow/engine";
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
import type { ClockContext } from "../foundation/clock";
import { hashPassword } from "../participant-accounts/passwords";
import { normalizeEmail } from "../participant-accounts/password-reset";
import { forgetCached } from "../cache/read-cache";
import { mainProfileValues } from "../participant-accounts/main-profile";
import { recordAudit } from "../foundation/audit";
import { conflictOnUniqueViolation } from "../foundation/unique-conflict";
import { invalidRulesError } from "../rules/rule-issues";
import { Invalid } from "../errors";
import { storeRules } from "../rules/study-rules";
import { getStudy } from "../studies/study-repository";
import { checkTimeZone, updateStudy } from "../study-config/study-properties";

export { checkTimeZone };

/** Operator tasks (CLI, seeding, test fixtures): set up studies, rules, users and rights. */

export interface CreateStudyInput {
  key: string;
  status?: StudyStatus;
  /** Keys participant-id derivation; generated (256 bits) when absent. */
  secret?: string;
  trackAccount?: boolean;
  /** Rule settings (strict mode, time zone); checked as updateStudySettings checks them. */
  settings?: StudySettings;
  /**
   * Who creates it: recorded in the audit log as `study.create` (give a transaction as `db` so the
   * study and its record commit together). Test fixtures and seeds leave it out.
   */
  createdBy?: string;
}

export async function createStudy(db: Executor, input: CreateStudyInput) {
  const secret = input.secret ?? randomBytes(32).toString("hex");
  if (secret.length < 16) throw new Invalid("study secret must be at least 16 characters");
  if (input.settings?.timeZone !== undefined) checkTimeZone(input.settings.timeZone);
  const [row] = await conflictOnUniqueViolation(
    db
      .insert(studies)
      .values({
        key: input.key,
        status: input.status ?? "active",
        secret,
        trackAccount: input.trackAccount ?? false,
        config: { ...input.settings },
      })
      .returning(),
    `study "${input.key}" already exists`,
  );
  if (!row) throw new Error("study insert returned nothing");
  if (input.createdBy !== undefined) {
    await recordAudit(db, {
      studyKey: row.key,
      actor: input.createdBy,
      action: "study.create",
      details: { status: row.status, trackAccount: row.trackAccount, config: row.config },
    });
  }
  return row;
}

/** The settings of how a study's rules run. */
export type StudySettings = Pick<StudyConfig, "strictRules" | "timeZone" | "unknownSurveyVersion">;

/**
 * Changes the given settings, keeping the others, and records the change in the audit log;
 * returns the study's settings after the change.
 */
export async function updateStudySettings(
  db: Executor,
  studyKey: string,
  settings: StudySettings,
  actor: string,
  ctx: ClockContext,
): Promise<StudySettings> {
  const { study } = await updateStudy(
    db,
    studyKey,
    {
      ...(settings.strictRules === undefined ? {} : { strictRules: settings.strictRules }),
      ...(settings.timeZone === undefined ? {} : { timeZone: settings.timeZone }),
      ...(settings.unknownSurveyVersion === undefined ? {} : { unknownSurveyVersion: settings.unknownSurveyVersion }),
    },
    actor,
    ctx,
  );
  return {
    strictRules: study.config.strictRules ?? false,
    timeZone: study.config.timeZone ?? "UTC",
    unknownSurveyVersion: study.config.unknownSurveyVersion ?? "record",
  };
}

/**
 * Validates a rule set with the engine's validator and stores it as the study's next version,
 * audited as `rules.set` by `uploadedBy`. Invalid names the JSON path of each problem; NotFound
 * an unknown study.
 */
export async function setStudyRules(db: Executor, studyKey: string, rules: unknown, uploadedBy: string) {
  const validation = validateRules(rules);
  if (!validation.ok) throw invalidRulesError(validation.errors, { subject: "invalid rules" });
  const version = await db.transaction(async (tx) => {
    // Serialises concurrent uploads for one study, so each gets its own version number.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`study-rules:${studyKey}`}))`);
    await getStudy(tx, studyKey);
    return storeRules(tx, studyKey, validation.rules, uploadedBy);
  });
  forgetCached(db, "rules", studyKey);
  return version;
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
    await conflictOnUniqueViolation(
      db.execute(sql`
        insert into participants (study_key, participant_id, study_status, entered_at, modified_at)
        select ${input.studyKey}, ${prefix} || lpad(i::text, 9, '0'),
               ${JSON.stringify(statuses)}::text::jsonb ->> (i % ${statuses.length}), ${input.enteredAt}, ${input.enteredAt}
        from generate_series(${start}::int, ${end - 1}::int) as i`),
      `participant ids starting with "${prefix}" already exist in study "${input.studyKey}"`,
    );
  }
  return input.count;
}

export interface CreateUserInput {
  email: string;
  password: string;
  /**
   * Profile aliases; the first is the main profile. Default: one main profile with case-backend's
   * alias, the blurred address (as its create-user tools do).
   */
  profiles?: string[];
  preferredLanguage?: string;
  /** The creation time, taken as every profile's consent time (case-backend's tools set both). */
  now: Date;
}

export async function createUserWithProfiles(db: Database, input: CreateUserInput) {
  const passwordHash = await hashPassword(input.password);
  const email = normalizeEmail(input.email);
  return db.transaction(async (tx) => {
    const [user] = await conflictOnUniqueViolation(
      tx
        .insert(users)
        .values({ email, passwordHash, preferredLanguage: input.preferredLanguage ?? "en" })
        .returning(),
      `an account with e-mail ${input.email} already exists`,
    );
    if (!user) throw new Error("user insert returned nothing");
    const { now } = input;
    const [mainAlias, ...others] = input.profiles ?? [];
    const created = await tx
      .insert(profiles)
      .values([
        mainProfileValues(user.id, email, now, mainAlias),
        ...others.map((alias) => ({ userId: user.id, alias, mainProfile: false, consentConfirmedAt: now })),
      ])
      .returning();
    return { user, profiles: created };
  });
}

export async function grantPermission(db: Executor, subjectId: string, studyKey: string, action: StudyAction | "*") {
  await db.insert(permissions).values({ subjectId, studyKey, action }).onConflictDoNothing();
  forgetCached(db, "grants", subjectId);
}
