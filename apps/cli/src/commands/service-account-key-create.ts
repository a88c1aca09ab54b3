import { Option } from "commander";
import { z } from "zod";
import { createServiceAccountApiKey, DEFAULT_API_KEY_DAYS, MAX_API_KEY_DAYS } from "@studyflow/domain/access";
import { defineCommand, type CliContext } from "../command-definition";
import { UPLOADED_BY } from "../command-support";
import { rowId, text, wholeNumber } from "../flag-values";
import { fieldLines } from "../output";

export interface ServiceAccountKeyCreateInput {
  id: string;
  label?: string;
  expiresInDays?: number;
}

const DAY_MS = 86_400_000;

export async function serviceAccountKeyCreate(ctx: CliContext, input: ServiceAccountKeyCreateInput) {
  const now = new Date(ctx.clock());
  // Printed here once and never stored: lists (case-admin's too) show only its first characters.
  const { key, apiKey } = await createServiceAccountApiKey(ctx.database.db, {
    serviceAccountId: input.id,
    createdBy: UPLOADED_BY,
    now,
    ...(input.label === undefined ? {} : { label: input.label }),
    ...(input.expiresInDays === undefined ? {} : { expiresAt: new Date(now.getTime() + input.expiresInDays * DAY_MS) }),
  });
  const data = {
    key,
    id: apiKey.id,
    serviceAccountId: apiKey.serviceAccountId,
    label: apiKey.label,
    keyPrefix: apiKey.keyPrefix,
    createdAt: apiKey.createdAt,
    expiresAt: apiKey.expiresAt,
  };
  ctx.output.result(data, [
    key,
    ...fieldLines([
      ["id", apiKey.id],
      ["service account", apiKey.serviceAccountId],
      ["label", apiKey.label || undefined],
      ["expires", apiKey.expiresAt.toISOString()],
    ]),
    "The key is shown this once: store it now. Send it as the X-API-Key header to the management API;",
    "it acts as the service account, with the account's permissions (never admin).",
  ]);
  return data;
}

export const serviceAccountKeyCreateCommand = defineCommand({
  name: "service-account:key:create",
  summary: "create an API key of a service account (audited); the key is printed once",
  flags: () => [
    new Option("--id <ID>", "the service account's id (from service-account:list)").makeOptionMandatory(),
    new Option("--label <L>", "what the key is for, shown in lists"),
    new Option(
      "--expires-in-days <N>",
      `lifetime in days (default ${DEFAULT_API_KEY_DAYS}, at most ${MAX_API_KEY_DAYS})`,
    ),
  ],
  values: z
    .object({
      id: rowId("a service account", "service-account:list"),
      label: text.optional(),
      expiresInDays: wholeNumber(1, MAX_API_KEY_DAYS).optional(),
    })
    .transform(({ id, label, expiresInDays }): ServiceAccountKeyCreateInput => ({
      id,
      ...(label === undefined ? {} : { label }),
      ...(expiresInDays === undefined ? {} : { expiresInDays }),
    })),
  uses: "database",
  run: serviceAccountKeyCreate,
});
