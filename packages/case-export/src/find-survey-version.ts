import type { SurveyVersionPreview } from "./survey-questions";

/**
 * The version a response is read with, as CASE picks it: the one it names; failing that (no id, or
 * an id no stored version has), the one that was live at `arrivedAt`; failing that, the next one
 * published after it; failing that, the last one published before it. Null when none qualifies
 * (no versions, or every candidate was never published, i.e. published at 0).
 */
export function findSurveyVersion<V extends Pick<SurveyVersionPreview, "versionId" | "published" | "unpublished">>(
  versionId: string,
  arrivedAt: number,
  versions: readonly V[],
  now: number,
): V | null {
  if (versionId !== "") {
    for (const v of versions) if (v.versionId === versionId) return v;
  }
  return findVersionByTime(arrivedAt, versions, now);
}

function findVersionByTime<V extends Pick<SurveyVersionPreview, "published" | "unpublished">>(
  at: number,
  versions: readonly V[],
  now: number,
): V | null {
  // CASE starts both searches with "now" as the largest distance it accepts; on equal distance the
  // later version in the list (the older publication) wins.
  let nearest = now;
  let before: V | null = null;
  for (const v of versions) {
    if (v.published <= at && at - v.published <= nearest) {
      nearest = at - v.published;
      before = v;
    }
  }
  if (before !== null && before.published !== 0 && (before.unpublished === 0 || before.unpublished >= at)) {
    return before;
  }
  nearest = now;
  let after: V | null = null;
  for (const v of versions) {
    if (v.published >= at && v.published - at <= nearest) {
      nearest = v.published - at;
      after = v;
    }
  }
  if (after !== null && after.published !== 0) return after;
  if (before !== null && before.published !== 0) return before;
  return null;
}
