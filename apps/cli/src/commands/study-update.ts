import { Option } from "commander";
import { z } from "zod";
import { LANGUAGE_CODE, STUDY_STATUSES, updateStudy, type StudyChange } from "@studyflow/domain/study-config";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { UsageError } from "../failures";
import { commaList, oneOf, studyKey, text } from "../flag-values";
import { studyResult } from "./study-show";

/** What --clear can remove, by the flag that sets it. */
const CLEARABLE = {
  name: "name",
  description: "description",
  tags: "tags",
  "start-date": "startDate",
  "time-zone": "timeZone",
} as const satisfies Record<string, keyof StudyChange>;
const CLEARABLE_FLAGS = Object.keys(CLEARABLE) as (keyof typeof CLEARABLE)[];

export interface StudyUpdateInput {
  key: string;
  change: StudyChange;
}

export async function studyUpdate(ctx: CliContext, input: StudyUpdateInput) {
  const { data, lines } = studyResult(await updateStudy(ctx.database.db, input.key, input.change, UPLOADED_BY, ctx));
  ctx.output.result(data, [`study "${input.key}" updated`, ...lines]);
  return data;
}

/** A flag given once per language: commander hands every occurrence to this, in order. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** `en=Flu watch` occurrences as a map; a language given twice is more likely a typo than intended. */
const languageTexts = z.array(text).transform((pairs, ctx) => {
  const texts: Record<string, string> = {};
  for (const pair of pairs) {
    const split = pair.indexOf("=");
    const language = pair.slice(0, Math.max(split, 0));
    if (split < 1 || !LANGUAGE_CODE.test(language)) {
      ctx.addIssue({ code: "custom", message: `takes LANG=TEXT with a language code such as en, got "${pair}"` });
      return z.NEVER;
    }
    if (language in texts) {
      ctx.addIssue({ code: "custom", message: `gives language "${language}" twice` });
      return z.NEVER;
    }
    texts[language] = pair.slice(split + 1);
  }
  return texts;
});

export const studyUpdateCommand = defineCommand({
  name: "study:update",
  summary:
    "change a study's names, descriptions, tags, start date, default-study flag, time zone, status or account tracking (audited)",
  flags: () => [
    new Option("--key <KEY>", "study key").makeOptionMandatory(),
    new Option("--name <LANG=TEXT>", "the name in one language, e.g. en='Flu watch'; repeat per language").argParser(
      collect,
    ),
    new Option("--description <LANG=TEXT>", "the description in one language; repeat per language").argParser(collect),
    new Option("--tags <TAG,TAG>", "the study's tags, replacing the present ones"),
    new Option("--start-date <YYYY-MM-DD>", "the study's start"),
    new Option("--time-zone <ZONE>", "IANA time zone of the rules' calendar functions, e.g. Europe/Amsterdam"),
    new Option(
      "--status <active|inactive>",
      "inactive refuses every participant event (enter, leave, submit, temporary participants)",
    ),
    new Option("--track-account <on|off>", "on: participants store an HMAC of their account id"),
    new Option(
      "--system-default <on|off>",
      "on: participant apps enter every new profile into this study (CASE's default study)",
    ),
    new Option("--clear <FIELDS>", `remove these, comma-separated: ${CLEARABLE_FLAGS.join(", ")}`),
  ],
  values: z
    .object({
      key: studyKey,
      name: languageTexts.optional(),
      description: languageTexts.optional(),
      tags: commaList.optional(),
      startDate: text.optional(),
      timeZone: text.optional(),
      status: oneOf(STUDY_STATUSES).optional(),
      trackAccount: oneOf(["on", "off"]).optional(),
      systemDefault: oneOf(["on", "off"]).optional(),
      clear: commaList.pipe(z.array(oneOf(CLEARABLE_FLAGS))).optional(),
    })
    .transform(({ key, clear, trackAccount, systemDefault, ...given }): StudyUpdateInput => {
      const change: StudyChange = {
        ...(given.name === undefined ? {} : { name: given.name }),
        ...(given.description === undefined ? {} : { description: given.description }),
        ...(given.tags === undefined ? {} : { tags: given.tags }),
        ...(given.startDate === undefined ? {} : { startDate: given.startDate }),
        ...(given.timeZone === undefined ? {} : { timeZone: given.timeZone }),
        ...(given.status === undefined ? {} : { status: given.status }),
        ...(trackAccount === undefined ? {} : { trackAccount: trackAccount === "on" }),
        ...(systemDefault === undefined ? {} : { systemDefaultStudy: systemDefault === "on" }),
      };
      for (const flag of clear ?? []) {
        const field = CLEARABLE[flag];
        if (field in change) throw new UsageError(`--${flag} and --clear ${flag} contradict each other`);
        Object.assign(change, { [field]: null });
      }
      if (Object.keys(change).length === 0) {
        throw new UsageError(
          "give at least one of --name, --description, --tags, --start-date, --time-zone, --status, --track-account, --system-default, --clear",
        );
      }
      return { key, change };
    }),
  uses: "database",
  run: studyUpdate,
});
