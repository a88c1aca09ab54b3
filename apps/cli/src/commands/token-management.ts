import { Option } from "commander";
import { z } from "zod";
import { mintManagementToken } from "@studyflow/domain/access";
import { defineCommand, type CliContext } from "../command-definition";
import { DEFAULT_TOKEN_TTL_SECONDS, expiryOf, ttlFlag, ttlSeconds } from "../command-support";
import { switchFlag, text } from "../flag-values";
import { fieldLines } from "../output";

export interface ManagementTokenCommandInput {
  subject: string;
  admin?: boolean;
  ttlSeconds?: number;
}

export async function tokenManagement(ctx: CliContext, input: ManagementTokenCommandInput) {
  const now = ctx.clock();
  const ttlSeconds = input.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  const admin = input.admin ?? false;
  const token = await mintManagementToken({
    subject: input.subject,
    isAdmin: admin,
    secret: ctx.config.MANAGEMENT_JWT_SECRET,
    ttlSeconds,
    now,
  });
  const data = { token, subject: input.subject, admin, expiresAt: expiryOf(now, ttlSeconds) };
  ctx.output.result(data, [
    token,
    ...fieldLines([
      ["subject", input.subject],
      ["admin", admin],
      ["expires", data.expiresAt],
    ]),
  ]);
  return data;
}

export const tokenManagementCommand = defineCommand({
  name: "token:management",
  summary: "mint a management (researcher/operator) token",
  flags: () => [
    new Option("--subject <S>", "token subject").makeOptionMandatory(),
    new Option("--admin", "admin token: every right on every study"),
    ttlFlag(),
  ],
  values: z
    .object({ subject: text, admin: switchFlag, ttl: ttlSeconds })
    .transform(({ subject, admin, ttl }): ManagementTokenCommandInput => ({
      subject,
      admin,
      ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
    })),
  uses: "database",
  run: tokenManagement,
});
