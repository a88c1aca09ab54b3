import { Option } from "commander";
import { z } from "zod";
import { NotFound } from "@studyflow/domain/errors";
import { accountTokenLink, initiatePasswordReset } from "@studyflow/domain/participant-accounts";
import { defineCommand, type CliContext } from "../command-definition";
import { text } from "../flag-values";
import { fieldLines } from "../output";

export interface PasswordResetTokenInput {
  email: string;
}

export async function passwordResetToken(ctx: CliContext, input: PasswordResetTokenInput) {
  const now = new Date(ctx.clock());
  const issued = await initiatePasswordReset(ctx.database.db, {
    email: input.email,
    now,
    ttlSeconds: ctx.config.RESET_TOKEN_TTL_SECONDS,
    resetUrl: ctx.config.RESET_PASSWORD_URL,
  });
  // Unlike the HTTP endpoint, an operator may learn whether an account exists.
  if (!issued) throw new NotFound("no account with that e-mail");
  const data = {
    token: issued.token,
    resetUrl: accountTokenLink(ctx.config.RESET_PASSWORD_URL, issued.token),
    // The same instant initiatePasswordReset stored (milliseconds, unlike JWT expiry).
    expiresAt: new Date(now.getTime() + ctx.config.RESET_TOKEN_TTL_SECONDS * 1000).toISOString(),
  };
  ctx.output.result(data, [
    issued.token,
    ...fieldLines([
      ["reset link", data.resetUrl],
      ["expires", data.expiresAt],
    ]),
    "the reset e-mail to the account holder was queued as well",
  ]);
  return data;
}

export const passwordResetTokenCommand = defineCommand({
  name: "password-reset:token",
  summary: "issue a password-reset token for an account (also queues the reset e-mail)",
  flags: () => [new Option("--email <E>", "the account's login e-mail").makeOptionMandatory()],
  values: z.object({ email: text }),
  uses: "database",
  run: passwordResetToken,
});
