import { Option } from "commander";
import { z } from "zod";
import { createServiceAccount } from "@studyflow/domain/management-users";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { text } from "../flag-values";
import { fieldLines } from "../output";

export interface ServiceAccountCreateInput {
  label: string;
  description?: string;
}

export async function serviceAccountCreate(ctx: CliContext, input: ServiceAccountCreateInput) {
  const account = await createServiceAccount(
    ctx.database.db,
    { label: input.label, ...(input.description === undefined ? {} : { description: input.description }) },
    UPLOADED_BY,
    new Date(ctx.clock()),
  );
  const data = {
    serviceAccount: {
      id: account.id,
      label: account.label,
      description: account.description,
      createdBy: account.createdBy,
      createdAt: account.createdAt,
    },
  };
  ctx.output.result(data, [
    ...fieldLines([
      ["id", account.id],
      ["label", account.label],
      ["description", account.description || undefined],
    ]),
    "Give it rights and a key:",
    `  npm run cli -- permission:grant --subject-type service-account --subject ${account.id} --study KEY --action A`,
    `  npm run cli -- service-account:key:create --id ${account.id}`,
  ]);
  return data;
}

export const serviceAccountCreateCommand = defineCommand({
  name: "service-account:create",
  summary: "create a service account (a machine calling the management API with API keys), audited",
  flags: () => [
    new Option("--label <L>", "the account's name, shown in lists (at most 200 characters)").makeOptionMandatory(),
    new Option("--description <D>", "what the account is for (at most 2000 characters)"),
  ],
  values: z
    .object({ label: text, description: text.optional() })
    .transform(({ label, description }): ServiceAccountCreateInput => ({
      label,
      ...(description === undefined ? {} : { description }),
    })),
  uses: "database",
  run: serviceAccountCreate,
});
