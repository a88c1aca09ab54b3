import { Option } from "commander";
import { z } from "zod";
import { createApiKey, DEFAULT_API_KEY_DAYS, MAX_API_KEY_DAYS } from "@studyflow/domain/access";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { text, wholeNumber } from "../flag-values";
import { fieldLines } from "../output";

export interface ServiceKeyCreateInput {
  subject: string;
  label?: string;
  expiresInDays?: number;
}

export async function serviceKeyCreate(ctx: CliContext, input: ServiceKeyCreateInput) {
  const { key, apiKey } = await createApiKey(ctx.database.db, {
    now: new Date(ctx.clock()),
    subject: input.subject,
    ...(input.label === undefined ? {} : { label: input.label }),
    ...(input.expiresInDays === undefined ? {} : { expiresInDays: input.expiresInDays }),
    // the operator CLI is the actor of every change it makes (as for the rules it uploads)
    createdBy: UPLOADED_BY,
  });
  const data = {
    key,
    id: apiKey.id,
    subject: apiKey.subject,
    label: apiKey.label,
    keyPrefix: apiKey.keyPrefix,
    createdAt: apiKey.createdAt,
    expiresAt: apiKey.expiresAt,
  };
  ctx.output.result(data, [
    key,
    ...fieldLines([
      ["id", apiKey.id],
      ["subject", apiKey.subject],
      ["label", apiKey.label || undefined],
      ["expires", apiKey.expiresAt.toISOString()],
    ]),
    "The key is shown this once: store it now. Send it as the X-API-Key header to the management API.",
    `It acts as "${apiKey.subject}" with that subject's permissions (never admin); to grant one:`,
    `  npm run cli -- permission:grant --subject ${apiKey.subject} --study KEY --action run-study-action`,
  ]);
  return data;
}

export const serviceKeyCreateCommand = defineCommand({
  name: "service-key:create",
  summary: "create an API key for a service account (machine caller); the key is printed once",
  flags: () => [
    new Option("--subject <S>", "the management subject the key acts as").makeOptionMandatory(),
    new Option("--label <L>", "what the key is for, shown in lists"),
    new Option(
      "--expires-in-days <N>",
      `lifetime in days (default ${DEFAULT_API_KEY_DAYS}, at most ${MAX_API_KEY_DAYS})`,
    ),
  ],
  values: z
    .object({ subject: text, label: text.optional(), expiresInDays: wholeNumber(1, MAX_API_KEY_DAYS).optional() })
    .transform(({ subject, label, expiresInDays }): ServiceKeyCreateInput => ({
      subject,
      ...(label === undefined ? {} : { label }),
      ...(expiresInDays === undefined ? {} : { expiresInDays }),
    })),
  uses: "database",
  run: serviceKeyCreate,
});
