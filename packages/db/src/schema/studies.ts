import { sql } from "drizzle-orm";
import { bigint, boolean, check, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export type StudyStatus = "active" | "inactive";

/** Study-level configuration that is not worth a column of its own. */
export interface StudyConfig {
  /** Maximum age, in seconds, of a temporary participant that may still be merged. */
  temporaryParticipantMaxAgeSeconds?: number;
  /**
   * Strict rules: a participant event for which any rule fails (an action inside IFTHEN too) is
   * rejected whole, nothing stored, as the reference platform rejects events whose rules fail.
   * Default off: the failing rule (or IFTHEN action) is skipped, the rest is kept.
   */
  strictRules?: boolean;
  /** IANA zone the calendar functions of the rules compute in; default UTC. */
  timeZone?: string;
  /**
   * A submitted response whose `versionId` names no uploaded version of its survey: "reject" it
   * (400, nothing stored) or "record" it (stored, and a rule-failure record says so). Default
   * "record": studies that upload no surveys keep working. An empty versionId is never checked.
   */
  unknownSurveyVersion?: "reject" | "record";
  /**
   * CASE's participantFileUploadRule: an engine expression that must be true (or a non-zero
   * number) for a participant's file upload, evaluated as a CUSTOM event "FILE_UPLOAD" with the
   * payload {fileSize, contentType}. Absent: uploads are refused, as case-backend refuses them.
   */
  participantFileUploadRule?: unknown;
}

/** What a study is, for people: shown in the console and to participant apps. */
export interface StudyProps {
  /** Per language code, e.g. { en: "Flu watch", de: "Grippe-Radar" }. */
  name?: Record<string, string>;
  description?: Record<string, string>;
  tags?: string[];
  /**
   * The tags per language, as case-admin edits them ({ en: "flu", de: "Grippe" } per tag);
   * `tags` keeps one language's text of each for studyflow's own clients.
   */
  localisedTags?: Record<string, string>[];
  /** The study's start, an ISO date (YYYY-MM-DD). */
  startDate?: string;
  /**
   * CASE's default study: participant apps enter every profile of a new account into it (the
   * tekenradar app reads it from the public study list).
   */
  systemDefaultStudy?: boolean;
}

/** studyflow's own way from a profile id to a participant id: HMAC-SHA256 keyed by the study secret. */
export const STUDYFLOW_ID_MAPPING_METHOD = "hmac-sha256";

/**
 * case-backend's ways (its study `configs.idMappingMethod`), kept by a study imported from CASE so
 * that its participants keep their ids. The empty string is CASE's historical default (AES-CTR),
 * which it applies to a study whose method was never set.
 */
export const CASE_ID_MAPPING_METHODS = ["same", "sha224", "sha224-b64", "sha256", "sha256-b64", "aesctr", ""] as const;

export const ID_MAPPING_METHODS = [STUDYFLOW_ID_MAPPING_METHOD, ...CASE_ID_MAPPING_METHODS] as const;
export type IdMappingMethod = (typeof ID_MAPPING_METHODS)[number];

export const studies = pgTable(
  "studies",
  {
    key: text("key").primaryKey(),
    status: text("status").$type<StudyStatus>().notNull().default("inactive"),
    /** Keys the derivation of participant ids from profile ids (id_mapping_method); never leaves the server. */
    secret: text("secret").notNull(),
    /**
     * How participant ids, confidential ids and hashed account ids are derived
     * (packages/domain/src/participants/participant-ids.ts). Fixed for the study's life: another
     * method would give its participants' profiles new, empty participants.
     */
    idMappingMethod: text("id_mapping_method").$type<IdMappingMethod>().notNull().default(STUDYFLOW_ID_MAPPING_METHOD),
    trackAccount: boolean("track_account").notNull().default(false),
    config: jsonb("config").$type<StudyConfig>().notNull().default({}),
    props: jsonb("props").$type<StudyProps>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    check(
      "studies_id_mapping_method",
      sql`${t.idMappingMethod} in (${sql.join(
        ID_MAPPING_METHODS.map((method) => sql.raw(`'${method}'`)),
        sql`, `,
      )})`,
    ),
  ],
);

/** The `study_key` column of a study's own rows: they go with their study. */
export const studyKeyColumn = () =>
  text("study_key")
    .notNull()
    .references(() => studies.key, { onDelete: "cascade" });

/**
 * Counts shown with a study (CASE's study `stats.responseCount`) that no trigger keeps: kept
 * exact on every response, the counter row would serialise a study's submissions. Refreshed
 * from time to time instead, as case-backend refreshes its stats; `counted_at` says when.
 */
export const studyStats = pgTable("study_stats", {
  studyKey: text("study_key")
    .primaryKey()
    .references(() => studies.key, { onDelete: "cascade" }),
  responseCount: bigint("response_count", { mode: "number" }).notNull().default(0),
  countedAt: timestamp("counted_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
