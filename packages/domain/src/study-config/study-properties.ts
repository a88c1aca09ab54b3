import type { ClockContext } from "../foundation/clock";
import { forgetCached } from "../cache/read-cache";
import { eq } from "drizzle-orm";
import { isTimeZoneName } from "@studyflow/engine";
import { studies, type Executor, type StudyConfig, type StudyProps, type StudyStatus } from "@studyflow/db";
import { recordAudit } from "../foundation/audit";
import { Invalid, NotFound } from "../errors";
import { getStudyOverview, type StudyOverview } from "./study-overview";

export const STUDY_STATUSES = ["active", "inactive"] as const satisfies readonly StudyStatus[];

/**
 * Bounds of the study properties. They are shown in consoles and participant apps, so they are
 * kept to what a screen can show: a title, a few paragraphs, a handful of short tags.
 */
export const STUDY_PROPERTY_LIMITS = {
  languages: 50,
  nameLength: 200,
  descriptionLength: 5_000,
  tags: 50,
  tagLength: 64,
} as const;

/** A BCP 47-style language code: en, de-CH, zh-Hant. */
export const LANGUAGE_CODE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** An IANA zone name the runtime knows (e.g. Europe/Amsterdam), or Invalid naming it. */
export function checkTimeZone(timeZone: string): void {
  // the engine's own check, so a zone the settings accept is one the rules can compute in
  if (!isTimeZoneName(timeZone)) {
    throw new Invalid(`unknown time zone "${timeZone}": use an IANA name such as Europe/Amsterdam or UTC`);
  }
}

/** YYYY-MM-DD naming a day that exists (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
}

/**
 * A change of a study's properties, status and rule settings. An absent field stays as it is; a
 * given one replaces the whole value (a name map replaces the names in every language); null
 * removes it (a removed time zone means UTC again).
 */
export interface StudyChange {
  name?: Record<string, string> | null;
  description?: Record<string, string> | null;
  tags?: string[] | null;
  /** YYYY-MM-DD. */
  startDate?: string | null;
  /** CASE's default study, entered by participant apps for every new profile. */
  systemDefaultStudy?: boolean;
  /** IANA zone of the rules' calendar functions. */
  timeZone?: string | null;
  strictRules?: boolean;
  /** What a response whose versionId names no uploaded version of its survey gets: see StudyConfig. */
  unknownSurveyVersion?: "reject" | "record";
  status?: StudyStatus;
  /** Participants created from a profile store an HMAC of the account id and the main-profile flag. */
  trackAccount?: boolean;
}

const PROPS_FIELDS = [
  "name",
  "description",
  "tags",
  "startDate",
  "systemDefaultStudy",
] as const satisfies readonly (keyof StudyProps & keyof StudyChange)[];
const CONFIG_FIELDS = [
  "timeZone",
  "strictRules",
  "unknownSurveyVersion",
] as const satisfies readonly (keyof StudyConfig & keyof StudyChange)[];

function checkTexts(field: "name" | "description", texts: Record<string, string>, maxLength: number) {
  const entries = Object.entries(texts);
  if (entries.length > STUDY_PROPERTY_LIMITS.languages) {
    throw new Invalid(`${field}: at most ${STUDY_PROPERTY_LIMITS.languages} languages`);
  }
  for (const [language, text] of entries) {
    if (!LANGUAGE_CODE.test(language)) {
      throw new Invalid(`${field}: "${language}" is not a language code such as en or de-CH`);
    }
    if (text.trim() === "") throw new Invalid(`${field}.${language}: must not be empty`);
    if (text.length > maxLength) throw new Invalid(`${field}.${language}: longer than ${maxLength} characters`);
  }
}

/** Invalid naming the field, for input that did not pass an edge's own validation (the CLI's flags). */
export function checkStudyChange(change: StudyChange): void {
  if (change.name) checkTexts("name", change.name, STUDY_PROPERTY_LIMITS.nameLength);
  if (change.description) checkTexts("description", change.description, STUDY_PROPERTY_LIMITS.descriptionLength);
  if (change.tags) {
    if (change.tags.length > STUDY_PROPERTY_LIMITS.tags) {
      throw new Invalid(`tags: at most ${STUDY_PROPERTY_LIMITS.tags} tags`);
    }
    change.tags.forEach((tag, i) => {
      if (tag.trim() === "" || tag !== tag.trim()) {
        throw new Invalid(`tags[${i}]: must be non-empty, without surrounding spaces`);
      }
      if (tag.length > STUDY_PROPERTY_LIMITS.tagLength) {
        throw new Invalid(`tags[${i}]: longer than ${STUDY_PROPERTY_LIMITS.tagLength} characters`);
      }
      if (change.tags?.indexOf(tag) !== i) throw new Invalid(`tags[${i}]: "${tag}" is given twice`);
    });
  }
  if (typeof change.startDate === "string" && !isCalendarDate(change.startDate)) {
    throw new Invalid(`startDate: "${change.startDate}" is not a date YYYY-MM-DD`);
  }
  if (typeof change.timeZone === "string") checkTimeZone(change.timeZone);
  if (change.unknownSurveyVersion !== undefined && !["reject", "record"].includes(change.unknownSurveyVersion)) {
    throw new Invalid(`unknownSurveyVersion: must be "reject" or "record"`);
  }
  if (change.status !== undefined && !STUDY_STATUSES.includes(change.status)) {
    throw new Invalid(`status: must be one of ${STUDY_STATUSES.join(", ")}`);
  }
}

/** `record` with the given fields of `change` applied: null removes, a value replaces. */
function applied<T extends object>(record: T, change: StudyChange, fields: readonly (keyof T & keyof StudyChange)[]) {
  const result = { ...record } as Record<string, unknown>;
  for (const field of fields) {
    const value = change[field];
    if (value === null) delete result[field];
    else if (value !== undefined) result[field] = value;
  }
  return result as T;
}

/** JSON with object keys sorted: jsonb stores keys in its own order, so { en, de } comes back as { de, en }. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** `{field: {from, to}}` for the fields whose value changed; absent values are null. */
function differences<T extends object>(before: T, after: T, fields: readonly (keyof T)[]) {
  const changed: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of fields) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (canonicalJson(from) !== canonicalJson(to)) changed[String(field)] = { from, to };
  }
  return changed;
}

/**
 * Applies a change to a study and records what changed in the audit log, in one transaction: one
 * entry per kind of change (`study.props.update`, `study.config.update`, `study.status.update`,
 * `study.track-account.update`), none for a change that changes nothing. The row lock waits for
 * participant events in flight (they hold a share lock), so a study set inactive takes no event
 * that started after.
 */
export async function updateStudy(
  db: Executor,
  studyKey: string,
  change: StudyChange,
  actor: string,
  ctx: ClockContext,
): Promise<StudyOverview> {
  checkStudyChange(change);
  const overview = await db.transaction(async (tx) => {
    const [before] = await tx.select().from(studies).where(eq(studies.key, studyKey)).for("update").limit(1);
    if (!before) throw new NotFound(`study "${studyKey}" not found`);
    const props = applied(before.props, change, PROPS_FIELDS);
    const config = applied(before.config, change, CONFIG_FIELDS);
    const status = change.status ?? before.status;
    const trackAccount = change.trackAccount ?? before.trackAccount;
    const entries = [
      { action: "study.props.update", details: differences(before.props, props, PROPS_FIELDS) },
      { action: "study.config.update", details: differences(before.config, config, CONFIG_FIELDS) },
      { action: "study.status.update", details: differences({ status: before.status }, { status }, ["status"]) },
      {
        action: "study.track-account.update",
        details: differences({ trackAccount: before.trackAccount }, { trackAccount }, ["trackAccount"]),
      },
    ].filter((entry) => Object.keys(entry.details).length > 0);
    if (entries.length > 0) {
      await tx
        .update(studies)
        .set({ props, config, status, trackAccount, updatedAt: new Date(ctx.clock()) })
        .where(eq(studies.key, studyKey));
      for (const entry of entries) await recordAudit(tx, { studyKey, actor, ...entry });
    }
    return getStudyOverview(tx, studyKey);
  });
  forgetCached(db, "study", studyKey);
  return overview;
}
