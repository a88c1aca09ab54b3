import { Option } from "commander";
import { z } from "zod";
import { STUDY_ACTIONS, type StudyAction } from "@studyflow/db";
import { grantPermission } from "@studyflow/domain";
import { defineCommand, type CliContext } from "../command-definition";
import { requireStudy } from "../command-support";
import { oneOf, studyKeyOrWildcard, text } from "../flag-values";

const PERMISSION_ACTIONS = [...STUDY_ACTIONS, "*"] as const satisfies readonly (StudyAction | "*")[];

export interface PermissionGrantInput {
  subject: string;
  /** A study key, or "*" for every study. */
  studyKey: string;
  action: StudyAction | "*";
}

export async function permissionGrant(ctx: CliContext, input: PermissionGrantInput) {
  // Permissions have no foreign key (so "*" can exist); checking here catches a mistyped key.
  if (input.studyKey !== "*") await requireStudy(ctx.database.db, input.studyKey);
  await grantPermission(ctx.database.db, input.subject, input.studyKey, input.action);
  const data = { granted: { subject: input.subject, studyKey: input.studyKey, action: input.action } };
  ctx.output.result(data, [`granted "${input.action}" on study "${input.studyKey}" to ${input.subject}`]);
  return data;
}

export const permissionGrantCommand = defineCommand({
  name: "permission:grant",
  summary: "give a management subject a right on one study or on all",
  flags: () => [
    new Option("--subject <S>", "subject (the `sub` of its management tokens)").makeOptionMandatory(),
    new Option("--study <KEY|*>", "study key, or * for every study").makeOptionMandatory(),
    new Option(
      "--action <ACTION>",
      `the right granted: ${PERMISSION_ACTIONS.join(", ")} (* is every right)`,
    ).makeOptionMandatory(),
  ],
  values: z
    .object({ subject: text, study: studyKeyOrWildcard, action: oneOf(PERMISSION_ACTIONS) })
    .transform(({ subject, study, action }): PermissionGrantInput => ({ subject, studyKey: study, action })),
  uses: "database",
  run: permissionGrant,
});
