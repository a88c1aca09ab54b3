import { Option } from "commander";
import { z } from "zod";
import { revokeSubjectTokens } from "@studyflow/domain/access";
import { defineCommand, type CliContext } from "../command-definition";
import { text } from "../flag-values";

export interface TokenRevokeInput {
  subject: string;
}

/**
 * Ends every management token of a subject issued before this second; tokens minted from now on
 * work. Token issue times have one-second precision, hence the whole second.
 */
export async function tokenRevoke(ctx: CliContext, input: TokenRevokeInput) {
  const revokedBefore = new Date(Math.floor(ctx.clock() / 1000) * 1000);
  await revokeSubjectTokens(ctx.database.db, input.subject, revokedBefore);
  const data = { subject: input.subject, revokedBefore: revokedBefore.toISOString() };
  ctx.output.result(data, [`management tokens of ${input.subject} issued before ${data.revokedBefore} are revoked`]);
  return data;
}

export const tokenRevokeCommand = defineCommand({
  name: "token:revoke",
  summary: "revoke every management token of a subject issued until now",
  flags: () => [new Option("--subject <S>", "token subject").makeOptionMandatory()],
  values: z.object({ subject: text }),
  uses: "database",
  run: tokenRevoke,
});
