/**
 * Version ids as the CASE reference backend writes them: `YY-MM-N`, the upload's year and month
 * (UTC) and a counter within that month, e.g. `26-06-1`, `26-06-2`, `26-07-1`. Short enough to
 * read out, ordered by time, and familiar to the tools and people that know CASE surveys.
 */
export function versionIdPrefix(at: Date): string {
  const year = String(at.getUTCFullYear() % 100).padStart(2, "0");
  const month = String(at.getUTCMonth() + 1).padStart(2, "0");
  return `${year}-${month}-`;
}

/** The next id of a survey uploaded at `at`, given the version ids it already has. */
export function nextVersionId(existing: readonly string[], at: Date): string {
  const prefix = versionIdPrefix(at);
  let highest = 0;
  for (const id of existing) {
    if (!id.startsWith(prefix)) continue;
    const counter = id.slice(prefix.length);
    if (/^[1-9]\d*$/.test(counter)) highest = Math.max(highest, Number(counter));
  }
  return `${prefix}${highest + 1}`;
}
