import { eq, sql } from "drizzle-orm";
import { studies, studyParticipantCounts, studyStats, surveyResponses, type Executor } from "@studyflow/db";
import type { ClockContext } from "../foundation/clock";
import { recordAudit } from "../foundation/audit";
import { forgetCached } from "../cache/read-cache";
import { Invalid, NotFound } from "../errors";
import { checkStudyChange, STUDY_PROPERTY_LIMITS } from "./study-properties";

/**
 * A study's display properties and statistics in CASE's terms (the Study document case-admin
 * reads and edits): texts as LocalisedObjects, tags with a text per language, counts in `stats`.
 */

/** CASE's LocalisedObject: a language code and text parts. */
export interface CaseLocalisedText {
  code: string;
  parts: { dtype?: string; str?: string }[];
}

/** The language whose text of each tag studyflow's own clients see in `props.tags`. */
export const PLAIN_TAG_LANGUAGE = "en";

/** language code → text, the parts of each language joined; Invalid naming `field` for a repeated code. */
export function localisedToTexts(field: string, list: readonly CaseLocalisedText[]): Record<string, string> {
  const texts: Record<string, string> = {};
  list.forEach((item, i) => {
    if (Object.hasOwn(texts, item.code)) throw new Invalid(`${field}[${i}].code: "${item.code}" is given twice`);
    texts[item.code] = item.parts.map((part) => part.str ?? "").join("");
  });
  return texts;
}

export interface CaseDisplayProps {
  name: readonly CaseLocalisedText[];
  description: readonly CaseLocalisedText[];
  tags: readonly { label: readonly CaseLocalisedText[] }[];
}

/**
 * Replaces a study's name, description and tags with case-admin's display props (CASE replaces all
 * three), recording `study.props.update` with the values before and after in the same
 * transaction. Empty texts are dropped (case-admin sends an empty string for a language left
 * blank); each tag keeps its text per language in `localisedTags` and its English (else first)
 * text in `tags`. @throws Invalid naming the field, NotFound for an unknown study.
 */
export async function setCaseDisplayProps(
  db: Executor,
  studyKey: string,
  input: CaseDisplayProps,
  actor: string,
  ctx: ClockContext,
): Promise<void> {
  const nonEmpty = (texts: Record<string, string>) =>
    Object.fromEntries(Object.entries(texts).filter(([, text]) => text.trim() !== ""));
  const name = nonEmpty(localisedToTexts("name", input.name));
  const description = nonEmpty(localisedToTexts("description", input.description));
  const localisedTags = input.tags
    .map((tag, i) => nonEmpty(localisedToTexts(`tags[${i}].label`, tag.label)))
    .filter((texts) => Object.keys(texts).length > 0);
  if (localisedTags.length > STUDY_PROPERTY_LIMITS.tags) {
    throw new Invalid(`tags: at most ${STUDY_PROPERTY_LIMITS.tags} tags`);
  }
  const tags = localisedTags.map((texts) => (texts[PLAIN_TAG_LANGUAGE] ?? Object.values(texts)[0] ?? "").trim());
  localisedTags.forEach((texts, i) => {
    for (const [code, text] of Object.entries(texts)) {
      if (text.length > STUDY_PROPERTY_LIMITS.tagLength) {
        throw new Invalid(`tags[${i}].label.${code}: longer than ${STUDY_PROPERTY_LIMITS.tagLength} characters`);
      }
    }
  });
  // the plain tags follow studyflow's own rules (no duplicates); the per-language ones are kept as given
  checkStudyChange({ name, description, tags: [...new Set(tags)] });
  await db.transaction(async (tx) => {
    const [before] = await tx
      .select({ props: studies.props })
      .from(studies)
      .where(eq(studies.key, studyKey))
      .for("update")
      .limit(1);
    if (!before) throw new NotFound(`study "${studyKey}" not found`);
    const { name: _n, description: _d, tags: _t, localisedTags: _l, ...others } = before.props;
    const props = {
      ...others,
      ...(Object.keys(name).length > 0 ? { name } : {}),
      ...(Object.keys(description).length > 0 ? { description } : {}),
      ...(tags.length > 0 ? { tags: [...new Set(tags)], localisedTags } : {}),
    };
    await tx
      .update(studies)
      .set({ props, updatedAt: new Date(ctx.clock()) })
      .where(eq(studies.key, studyKey));
    await recordAudit(tx, {
      studyKey,
      actor,
      action: "study.props.update",
      details: {
        name: { from: before.props.name ?? null, to: props.name ?? null },
        description: { from: before.props.description ?? null, to: props.description ?? null },
        tags: { from: before.props.localisedTags ?? before.props.tags ?? null, to: props.localisedTags ?? null },
      },
    });
  });
  forgetCached(db, "study", studyKey);
}

export interface CaseStudyStats {
  participantCount: number;
  tempParticipantCount: number;
  responseCount: number;
}

/** How old the stored response count may be before a read counts again. */
export const RESPONSE_COUNT_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * The study's counts as CASE's `stats`: participants by status from the trigger-kept counts
 * (active; temporary), responses from study_stats, counted again when older than
 * RESPONSE_COUNT_MAX_AGE_MS (case-backend also refreshes its stats from time to time).
 */
export async function caseStudyStats(db: Executor, studyKey: string, now: Date): Promise<CaseStudyStats> {
  const counts = await db
    .select({ status: studyParticipantCounts.studyStatus, count: studyParticipantCounts.count })
    .from(studyParticipantCounts)
    .where(eq(studyParticipantCounts.studyKey, studyKey));
  const countOf = (status: string) => Number(counts.find((row) => row.status === status)?.count ?? 0);
  const [stored] = await db.select().from(studyStats).where(eq(studyStats.studyKey, studyKey)).limit(1);
  let responseCount = stored?.responseCount ?? 0;
  if (!stored || now.getTime() - stored.countedAt.getTime() > RESPONSE_COUNT_MAX_AGE_MS) {
    const [counted] = await db
      .select({ count: sql<number>`count(*)::bigint` })
      .from(surveyResponses)
      .where(eq(surveyResponses.studyKey, studyKey));
    responseCount = Number(counted?.count ?? 0);
    // the study may be deleted meanwhile: then there is nothing to keep the count for
    await db
      .insert(studyStats)
      .select(
        db
          .select({
            studyKey: studies.key,
            responseCount: sql<number>`${responseCount}::bigint`.as("response_count"),
            countedAt: sql<Date>`${now.toISOString()}::timestamptz`.as("counted_at"),
          })
          .from(studies)
          .where(eq(studies.key, studyKey)),
      )
      .onConflictDoUpdate({
        target: studyStats.studyKey,
        set: { responseCount: sql`excluded.response_count`, countedAt: sql`excluded.counted_at` },
      });
  }
  return { participantCount: countOf("active"), tempParticipantCount: countOf("temporary"), responseCount };
}
