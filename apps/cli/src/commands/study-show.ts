import { Option } from "commander";
import { z } from "zod";
import { getStudyOverview, type StudyOverview } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { studyKey } from "../flag-values";
import { fieldLines } from "../output";

/** `de: Grippe-Radar; en: Flu watch` (by language code), or nothing when no language is set. */
const languageTexts = (texts: Record<string, string> | undefined) =>
  texts && Object.keys(texts).length > 0
    ? Object.entries(texts)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([language, text]) => `${language}: ${text}`)
        .join("; ")
    : undefined;

/** The study as study:show and study:update print it: one JSON object, or aligned lines for people. */
export function studyResult({ study, currentRulesVersion }: StudyOverview) {
  const data = { study: { ...study, currentRulesVersion } };
  const lines = fieldLines([
    ["status", study.status === "active" ? "active" : "inactive (participant events are refused)"],
    ["name", languageTexts(study.props.name)],
    ["description", languageTexts(study.props.description)],
    ["tags", study.props.tags?.join(", ")],
    ["start date", study.props.startDate],
    ["default study", study.props.systemDefaultStudy ? "yes" : undefined],
    ["time zone", study.config.timeZone ?? "UTC"],
    ["strict rules", study.config.strictRules ? "on" : "off"],
    ["track account", study.trackAccount ? "on" : "off"],
    ["rules version", currentRulesVersion ?? "none"],
    ["updated", study.updatedAt.toISOString()],
  ]);
  return { data, lines };
}

export async function studyShow(ctx: CliContext, input: { key: string }) {
  const { data, lines } = studyResult(await getStudyOverview(ctx.database.db, input.key));
  ctx.output.result(data, [`study "${input.key}"`, ...lines]);
  return data;
}

export const studyShowCommand = defineCommand({
  name: "study:show",
  summary: "show a study's status, properties, rule settings and current rules version",
  flags: () => [new Option("--key <KEY>", "study key").makeOptionMandatory()],
  values: z.object({ key: studyKey }),
  uses: "database",
  run: studyShow,
});
