import type { DailyExportListing } from "@studyflow/domain/exports";

/**
 * A daily export's name as case-backend lists them and case-admin reads them:
 * `<YYYY-MM-DD>##responses##<surveyKey>##<format>.<ext>` — case-admin shows parts[0] as the date,
 * parts[2] as the survey and parts[3] up to the dot as the export's type, and asks for the file
 * back by this name, base64-encoded. A study has one daily export per survey and day, so the name
 * identifies its file.
 */
export function caseDailyExportName(listing: Pick<DailyExportListing, "date" | "surveyKey" | "fileName">): string {
  const stored = listing.fileName.replace(/\.gz$/i, "");
  const dot = stored.lastIndexOf(".");
  const extension = dot > 0 ? stored.slice(dot) : "";
  // studyflow names export files `<survey>_<format>_<time>.<ext>`
  const format = /_(wide|long|json)_[^_]*$/.exec(stored.slice(0, dot > 0 ? dot : undefined))?.[1] ?? "export";
  return `${listing.date}##responses##${listing.surveyKey}##${format}${extension}`;
}
