import { Option } from "commander";
import { z } from "zod";
import type { StudyStatus } from "@studyflow/db";
import { storeRules } from "@studyflow/domain/rules";
import { createStudy } from "@studyflow/domain/study-setup";
import { defineCommand, type CliContext } from "../command-definition";
import { readRulesFile, UPLOADED_BY } from "../command-support";
import { oneOf, studyKey, switchFlag, text } from "../flag-values";
import { fieldLines } from "../output";

const STUDY_STATUSES = ["active", "inactive"] as const satisfies readonly StudyStatus[];

export interface StudyCreateInput {
  key: string;
  status?: StudyStatus;
  secret?: string;
  trackAccount?: boolean;
  /** Path of a JSON file holding an Expression array, stored as rules version 1. */
  rulesFile?: string;
}

export async function studyCreate(ctx: CliContext, input: StudyCreateInput) {
  // Read and validated before anything is written: a bad file must leave no study behind.
  const rules = input.rulesFile === undefined ? undefined : await readRulesFile(ctx, input.rulesFile);
  const { study, rulesVersion } = await ctx.database.db.transaction(async (tx) => {
    const study = await createStudy(tx, {
      key: input.key,
      ...(input.status ? { status: input.status } : {}),
      ...(input.secret === undefined ? {} : { secret: input.secret }),
      trackAccount: input.trackAccount ?? false,
      createdBy: UPLOADED_BY,
    });
    // Same transaction as the study: either both exist or neither.
    const rulesVersion = rules ? await storeRules(tx, study.key, rules, UPLOADED_BY) : null;
    return { study, rulesVersion };
  });
  const data = {
    study: { key: study.key, status: study.status, trackAccount: study.trackAccount, createdAt: study.createdAt },
    rulesVersion,
  };
  ctx.output.result(data, [
    `study "${study.key}" created`,
    ...fieldLines([
      ["status", study.status],
      ["track account", study.trackAccount],
      ["rules version", rulesVersion ?? "none (upload with study:set-rules)"],
    ]),
  ]);
  return data;
}

export const studyCreateCommand = defineCommand({
  name: "study:create",
  summary: "create a study, optionally with its first rules version (validated before anything is written)",
  flags: () => [
    new Option("--key <KEY>", "study key").makeOptionMandatory(),
    new Option("--status <active|inactive>", "initial status (default active)"),
    new Option(
      "--secret <SECRET>",
      "key of participant-id derivation, at least 16 characters (default: 256 random bits)",
    ),
    new Option("--track-account", "record a hashed account id on participants"),
    new Option("--rules <FILE>", "JSON file holding an array of rule expressions"),
  ],
  values: z
    .object({
      key: studyKey,
      status: oneOf(STUDY_STATUSES).optional(),
      secret: text.optional(),
      trackAccount: switchFlag,
      rules: text.optional(),
    })
    .transform(({ key, status, secret, trackAccount, rules }): StudyCreateInput => ({
      key,
      ...(status ? { status } : {}),
      ...(secret === undefined ? {} : { secret }),
      trackAccount,
      ...(rules === undefined ? {} : { rulesFile: rules }),
    })),
  uses: "database",
  run: studyCreate,
});
