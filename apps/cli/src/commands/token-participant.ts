import { Option } from "commander";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { users } from "@studyflow/db";
import { mintParticipantToken } from "@studyflow/domain/access";
import { NotFound } from "@studyflow/domain/errors";
import { defineCommand, type CliContext } from "../command-definition";
import { DEFAULT_TOKEN_TTL_SECONDS, expiryOf, ttlFlag, ttlSeconds } from "../command-support";
import { userId } from "../flag-values";
import { fieldLines } from "../output";

export interface ParticipantTokenCommandInput {
  userId: string;
  ttlSeconds?: number;
}

export async function tokenParticipant(ctx: CliContext, input: ParticipantTokenCommandInput) {
  const [user] = await ctx.database.db
    .select({ tokenVersion: users.tokenVersion })
    .from(users)
    .where(eq(users.id, input.userId))
    .limit(1);
  if (!user) throw new NotFound(`no user with id ${input.userId}`);
  const now = ctx.clock();
  const ttlSeconds = input.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  // The current version: a token carrying an older one is refused after a password reset.
  const token = await mintParticipantToken({
    userId: input.userId,
    tokenVersion: user.tokenVersion,
    secret: ctx.config.PARTICIPANT_JWT_SECRET,
    ttlSeconds,
    now,
  });
  const data = { token, userId: input.userId, tokenVersion: user.tokenVersion, expiresAt: expiryOf(now, ttlSeconds) };
  ctx.output.result(data, [
    token,
    ...fieldLines([
      ["user", input.userId],
      ["token version", user.tokenVersion],
      ["expires", data.expiresAt],
    ]),
  ]);
  return data;
}

export const tokenParticipantCommand = defineCommand({
  name: "token:participant",
  summary: "mint a participant token for a user (carries the user's current token version)",
  flags: () => [new Option("--user <USER_ID>", "user id (UUID)").makeOptionMandatory(), ttlFlag()],
  values: z.object({ user: userId, ttl: ttlSeconds }).transform(({ user, ttl }): ParticipantTokenCommandInput => ({
    userId: user,
    ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
  })),
  uses: "database",
  run: tokenParticipant,
});
